//! The pure rules of a service graph given as `calls[i]` = the services `i` calls, by index:
//! which cycles it has, and which services the first one reaches.

/// Cycles of the graph, each once, as the services on it in call order starting from its
/// lowest index (`[1, 3, 2]` is 1 -> 3 -> 2 -> 1), with the edge that closed it: `(i, k)`,
/// the `k`-th call of service `i` (the call a user most likely just added). A depth-first
/// search in index and written order reports the cycle closed by each edge back into the
/// current path, so every graph with a cycle gets at least one, deterministically.
/// Self-calls count as cycles of one.
pub(super) fn cycles(calls: &[Vec<usize>]) -> Vec<(Vec<usize>, (usize, usize))> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let n = calls.len();
    let mut mark = vec![Mark::New; n];
    let mut found: Vec<(Vec<usize>, (usize, usize))> = Vec::new();
    for root in 0..n {
        if mark[root] != Mark::New {
            continue;
        }
        // An explicit stack of (service, next edge to follow), so deep graphs cannot
        // overflow the call stack.
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        mark[root] = Mark::OnPath;
        while let Some(&mut (node, ref mut edge)) = path.last_mut() {
            let Some(&next) = calls[node].get(*edge) else {
                mark[node] = Mark::Done;
                path.pop();
                continue;
            };
            let call = *edge;
            *edge += 1;
            if next >= n {
                continue;
            }
            match mark[next] {
                Mark::New => {
                    mark[next] = Mark::OnPath;
                    path.push((next, 0));
                }
                Mark::OnPath => {
                    let from = path
                        .iter()
                        .position(|&(s, _)| s == next)
                        .expect("a service marked on the path is on it");
                    let mut cycle: Vec<usize> = path[from..].iter().map(|&(s, _)| s).collect();
                    let lowest = cycle
                        .iter()
                        .enumerate()
                        .min_by_key(|&(_, s)| *s)
                        .map(|(i, _)| i)
                        .expect("a cycle is not empty");
                    cycle.rotate_left(lowest);
                    if !found.iter().any(|(c, _)| *c == cycle) {
                        found.push((cycle, (node, call)));
                    }
                }
                Mark::Done => {}
            }
        }
    }
    found
}

/// `reached[i]`: whether service `i` is `from` or is called from it, directly or not.
pub(super) fn reachable(calls: &[Vec<usize>], from: usize) -> Vec<bool> {
    let mut reached = vec![false; calls.len()];
    let mut todo = vec![from];
    while let Some(i) = todo.pop() {
        if i >= calls.len() || reached[i] {
            continue;
        }
        reached[i] = true;
        todo.extend(calls[i].iter().copied());
    }
    reached
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_and_a_diamond_have_no_cycle() {
        assert!(cycles(&[vec![1, 2], vec![], vec![]]).is_empty());
        // 0 -> 1 -> 3, 0 -> 2 -> 3: 3 is reached twice, which is not a cycle.
        assert!(cycles(&[vec![1, 2], vec![3], vec![3], vec![]]).is_empty());
        assert!(cycles(&[]).is_empty());
    }

    #[test]
    fn a_cycle_is_named_from_its_lowest_service_in_call_order() {
        // 0 -> 2 -> 3 -> 1 -> 2: the cycle 2 -> 3 -> 1 -> 2, named from 1, closed by the
        // first call of 1.
        assert_eq!(
            cycles(&[vec![2], vec![2], vec![3], vec![1]]),
            [(vec![1, 2, 3], (1, 0))]
        );
        assert_eq!(cycles(&[vec![1], vec![0]]), [(vec![0, 1], (1, 0))]);
        assert_eq!(cycles(&[vec![0]]), [(vec![0], (0, 0))], "a self-call");
        // Closed by the second call of 2.
        assert_eq!(
            cycles(&[vec![1], vec![2], vec![3, 0], vec![]]),
            [(vec![0, 1, 2], (2, 1))]
        );
    }

    #[test]
    fn separate_cycles_are_each_reported_once() {
        // 0 -> 1 <-> 2, 0 -> 3 <-> 4, and 2 -> 1 is reached again from 4 -> 1.
        let calls = [vec![1, 3], vec![2], vec![1], vec![4], vec![3, 1]];
        assert_eq!(cycles(&calls), [(vec![1, 2], (2, 0)), (vec![3, 4], (4, 0))]);
    }

    #[test]
    fn reachable_follows_calls_transitively() {
        let calls = [vec![1], vec![2], vec![], vec![2], vec![4]];
        assert_eq!(reachable(&calls, 0), [true, true, true, false, false]);
        assert_eq!(reachable(&calls, 3), [false, false, true, true, false]);
    }
}
