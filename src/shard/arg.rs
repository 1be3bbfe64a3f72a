//! Which shard a run is: `--shard i/n`, or `--shard auto` read from the batch engine's
//! environment (Slurm array, Kubernetes Indexed Job with `--shard-count`, AWS Batch array).

use crate::error::{Error, Result};
use crate::runner::Shard;

/// What the shard flag asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardArg {
    /// `i/n`.
    Fixed(Shard),
    /// `auto`: from the batch engine's environment.
    Auto,
}

/// Parses `--shard`: `i/n` with `0 <= i < n`, or `auto`.
pub fn parse_shard(text: &str) -> std::result::Result<ShardArg, String> {
    if text == "auto" {
        return Ok(ShardArg::Auto);
    }
    let parse = |s: &str| s.trim().parse::<u32>().ok();
    match text.split_once('/').map(|(i, n)| (parse(i), parse(n))) {
        Some((Some(index), Some(count))) if count >= 1 && index < count => {
            Ok(ShardArg::Fixed(Shard { index, count }))
        }
        // `0..0` read as a range to pick from: say what is wrong with the count itself.
        Some((Some(i), Some(0))) => {
            Err(format!("expected a shard count of at least 1, found {i}/0"))
        }
        Some((Some(i), Some(n))) => Err(format!(
            "expected a shard index below the shard count (0 to {}), found {i}/{n}",
            n - 1
        )),
        _ => Err(format!(
            "expected i/n (e.g. 0/4, the shard index from 0 and the shard count) or auto, found \"{text}\"{}",
            crate::scenario::guess_value(text, ["auto"])
        )),
    }
}

/// The shard `--shard auto` means in an environment read through `var` (Slurm, Kubernetes
/// Indexed Job with `shard_count`, AWS Batch array), in that order of precedence.
pub fn shard_from_env(
    var: impl Fn(&str) -> Option<String>,
    shard_count: Option<u32>,
) -> Result<Shard> {
    let number = |name: &str| -> Result<Option<u32>> {
        match var(name) {
            None => Ok(None),
            Some(v) => v.trim().parse::<u32>().map(Some).map_err(|_| {
                Error::Usage(format!(
                    "--shard auto: {name} must be a whole number, found \"{}\"",
                    crate::text::escape(&v)
                ))
            }),
        }
    };
    let checked = |index: u32, count: u32, from: &str| -> Result<Shard> {
        if count == 0 {
            return Err(Error::Usage(format!(
                "--shard auto: {from} gives a shard count of 0, expected at least 1"
            )));
        }
        if index >= count {
            return Err(Error::Usage(format!(
                "--shard auto: {from} gives shard {index} of {count}, expected an index below the count"
            )));
        }
        Ok(Shard { index, count })
    };
    // `--shard-count` is the count where the environment has none (Kubernetes); beside an
    // environment that gives its own, a different one means the job was not submitted as
    // the user thinks (ignoring it would run a different split than they asked for).
    let agrees = |count: u32, from: &str| -> Result<()> {
        match shard_count {
            Some(given) if given != count => Err(Error::Usage(format!(
                "--shard auto: --shard-count {given} disagrees with {from}, which gives {count} shards; drop --shard-count or submit the array with {given} tasks"
            ))),
            _ => Ok(()),
        }
    };
    if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
        let count = number("SLURM_ARRAY_TASK_COUNT")?.ok_or_else(|| {
            Error::Usage(
                "--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not".into(),
            )
        })?;
        let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let step = number("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1);
        if step == 0 {
            return Err(Error::Usage(
                "--shard auto: SLURM_ARRAY_TASK_STEP must be at least 1, found 0".into(),
            ));
        }
        let max = number("SLURM_ARRAY_TASK_MAX")?;
        let Some(offset) = id.checked_sub(min) else {
            return Err(Error::Usage(format!(
                "--shard auto: SLURM_ARRAY_TASK_ID {id} is below SLURM_ARRAY_TASK_MIN {min}, expected a task of the array"
            )));
        };
        if let Some(max) = max
            && id > max
        {
            return Err(Error::Usage(format!(
                "--shard auto: SLURM_ARRAY_TASK_ID {id} is above SLURM_ARRAY_TASK_MAX {max}, expected a task of the array"
            )));
        }
        if offset % step != 0 {
            return Err(Error::Usage(format!(
                "--shard auto: SLURM_ARRAY_TASK_ID {id} is not SLURM_ARRAY_TASK_MIN {min} plus a multiple of SLURM_ARRAY_TASK_STEP {step}, expected a task of the array"
            )));
        }
        // A stepped array (`--array=0-14:2`) numbers its tasks min, min + step, ...; any
        // other spacing (a list such as `--array=0,1,5`) has no shard numbering herdsim can
        // derive, and guessing one would run some jobs twice and others never. Seen from
        // MAX: COUNT ids STEP apart from MIN end at MAX. (A list that fits that test but
        // skips an id, which Slurm's STEP may or may not reveal, runs some shards; `merge`
        // then refuses the missing ones.)
        if let Some(max) = max
            && count > 0
            && u64::from(max - min) != u64::from(count - 1) * u64::from(step)
        {
            return Err(Error::Usage(format!(
                "--shard auto: this Slurm array's {count} task ids do not run from {min} to {max} in steps of {step} (SLURM_ARRAY_TASK_COUNT, _MIN, _MAX, _STEP): they are not evenly spaced; submit --array=0-N or a stepped range such as --array=0-14:2, or use --shard i/n"
            )));
        }
        agrees(count, "SLURM_ARRAY_TASK_COUNT")?;
        return checked(
            offset / step,
            count,
            "Slurm ((SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP)",
        );
    }
    if let Some(index) = number("JOB_COMPLETION_INDEX")? {
        let count = shard_count.ok_or_else(|| {
            Error::Usage(
                "--shard auto: JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) needs --shard-count, the Job's completions".into(),
            )
        })?;
        return checked(index, count, "JOB_COMPLETION_INDEX with --shard-count");
    }
    if let Some(index) = number("AWS_BATCH_JOB_ARRAY_INDEX")? {
        let count = number("AWS_BATCH_JOB_ARRAY_SIZE")?.ok_or_else(|| {
            Error::Usage("--shard auto: AWS_BATCH_JOB_ARRAY_INDEX is set but AWS_BATCH_JOB_ARRAY_SIZE is not".into())
        })?;
        agrees(count, "AWS_BATCH_JOB_ARRAY_SIZE")?;
        return checked(index, count, "AWS Batch (AWS_BATCH_JOB_ARRAY_INDEX)");
    }
    Err(Error::Usage(
        "--shard auto: no batch array found in the environment (SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX); use --shard i/n".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_arguments_parse_and_refuse_nonsense() {
        assert_eq!(
            parse_shard("2/7"),
            Ok(ShardArg::Fixed(Shard { index: 2, count: 7 }))
        );
        assert_eq!(parse_shard("auto"), Ok(ShardArg::Auto));
        assert!(
            parse_shard("7/7")
                .unwrap_err()
                .contains("below the shard count")
        );
        assert_eq!(
            parse_shard("7/7"),
            Err("expected a shard index below the shard count (0 to 6), found 7/7".into())
        );
        // It used to say "(0..0)", a range with nothing to pick.
        assert_eq!(
            parse_shard("1/0"),
            Err("expected a shard count of at least 1, found 1/0".into())
        );
        assert!(parse_shard("x").unwrap_err().contains("expected i/n"));
        assert!(parse_shard("x").unwrap_err().ends_with("found \"x\""));
        // `auto` with two letters swapped, neighbours or not.
        for typo in ["atuo", "aotu"] {
            assert!(
                parse_shard(typo)
                    .unwrap_err()
                    .ends_with(&format!("found \"{typo}\" (did you mean \"auto\"?)")),
                "{typo}"
            );
        }
    }

    #[test]
    fn auto_reads_slurm_kubernetes_and_aws_batch() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let slurm = env(&[
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
        ]);
        assert_eq!(
            shard_from_env(slurm, None).unwrap(),
            Shard { index: 4, count: 8 }
        );
        // --array=1-15:2, task 7: the fourth of eight.
        let stepped = env(&[
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "15"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
        ]);
        assert_eq!(
            shard_from_env(stepped, None).unwrap(),
            Shard { index: 3, count: 8 }
        );
        // Refused, each saying what is wrong: --array=1,3,7 (three ids from 1 to 7 are no
        // step of 2 apart), a task off the step, one above MAX, a step of 0.
        for (id, max, step, says) in [
            (
                "3",
                "7",
                "2",
                "3 task ids do not run from 1 to 7 in steps of 2",
            ),
            (
                "2",
                "5",
                "2",
                "SLURM_ARRAY_TASK_ID 2 is not SLURM_ARRAY_TASK_MIN 1 plus a multiple of SLURM_ARRAY_TASK_STEP 2",
            ),
            (
                "9",
                "5",
                "2",
                "SLURM_ARRAY_TASK_ID 9 is above SLURM_ARRAY_TASK_MAX 5",
            ),
            (
                "3",
                "5",
                "0",
                "SLURM_ARRAY_TASK_STEP must be at least 1, found 0",
            ),
        ] {
            let vars = [
                ("SLURM_ARRAY_TASK_ID", id),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_MAX", max),
                ("SLURM_ARRAY_TASK_STEP", step),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
            ];
            let var = |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            };
            let e = shard_from_env(var, None).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
        let k8s = env(&[("JOB_COMPLETION_INDEX", "3")]);
        assert_eq!(
            shard_from_env(k8s, Some(4)).unwrap(),
            Shard { index: 3, count: 4 }
        );
        assert!(
            shard_from_env(env(&[("JOB_COMPLETION_INDEX", "3")]), None)
                .unwrap_err()
                .to_string()
                .contains("--shard-count")
        );
        let aws = env(&[
            ("AWS_BATCH_JOB_ARRAY_INDEX", "0"),
            ("AWS_BATCH_JOB_ARRAY_SIZE", "2"),
        ]);
        assert_eq!(
            shard_from_env(aws, None).unwrap(),
            Shard { index: 0, count: 2 }
        );
        assert!(shard_from_env(env(&[]), None).is_err());
        // A --shard-count beside an environment that gives its own count must agree with it.
        let slurm = env(&[
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
        ]);
        assert_eq!(
            shard_from_env(slurm, Some(8)).unwrap(),
            Shard { index: 4, count: 8 }
        );
        assert_eq!(
            shard_from_env(slurm, Some(4)).unwrap_err().to_string(),
            "--shard auto: --shard-count 4 disagrees with SLURM_ARRAY_TASK_COUNT, which gives 8 shards; drop --shard-count or submit the array with 4 tasks"
        );
        let aws = env(&[
            ("AWS_BATCH_JOB_ARRAY_INDEX", "0"),
            ("AWS_BATCH_JOB_ARRAY_SIZE", "2"),
        ]);
        assert!(
            shard_from_env(aws, Some(3))
                .unwrap_err()
                .to_string()
                .contains("--shard-count 3 disagrees with AWS_BATCH_JOB_ARRAY_SIZE, which gives 2")
        );
        assert!(
            shard_from_env(
                env(&[
                    ("SLURM_ARRAY_TASK_ID", "9"),
                    ("SLURM_ARRAY_TASK_COUNT", "8")
                ]),
                None
            )
            .is_err()
        );
    }
}
