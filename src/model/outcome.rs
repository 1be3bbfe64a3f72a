//! What an attempt can come back with, and why a logical request can end.
//!
//! These names appear in scenario files (`retry_on`, `fallback_on`) and in outputs
//! (`requests.csv`, summary columns), so each has one spelling, defined here.

/// The result of one attempt, as the client sees it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[repr(u8)]
pub enum Status {
    /// 200: served.
    Ok = 0,
    /// 400: the request itself is bad; never retried.
    BadRequest = 1,
    /// 429: refused by the server's rate limiter.
    TooManyRequests = 2,
    /// 500: served, but answered with an error (an `errors` outage).
    ServerError = 3,
    /// 503: refused at once (outage, or every slot and queue place taken).
    Unavailable = 4,
    /// No response within the attempt timeout.
    Timeout = 5,
    /// The server could not be reached (an `unreachable` outage).
    Unreachable = 6,
    /// The client's own circuit breaker refused to send (never reaches the server).
    BreakerOpen = 7,
    /// 409: an optimistic write lost to a concurrent one (an `occ` server); retryable.
    Conflict = 8,
}

impl Status {
    /// Every status, in code order.
    pub const ALL: [Status; 9] = [
        Status::Ok,
        Status::BadRequest,
        Status::TooManyRequests,
        Status::ServerError,
        Status::Unavailable,
        Status::Timeout,
        Status::Unreachable,
        Status::BreakerOpen,
        Status::Conflict,
    ];

    /// The failure classes a client may retry (`retry_on`), in output-column order.
    pub const RETRYABLE: [Status; 6] = [
        Status::Unavailable,
        Status::ServerError,
        Status::TooManyRequests,
        Status::Timeout,
        Status::Unreachable,
        Status::Conflict,
    ];

    /// The spelling in scenario files and outputs: `200`, `503`, `timeout`, ...
    pub fn label(self) -> &'static str {
        match self {
            Status::Ok => "200",
            Status::BadRequest => "400",
            Status::TooManyRequests => "429",
            Status::ServerError => "500",
            Status::Unavailable => "503",
            Status::Timeout => "timeout",
            Status::Unreachable => "unreachable",
            Status::BreakerOpen => "breaker_open",
            Status::Conflict => "409",
        }
    }

    /// Parses a `retry_on` entry.
    pub fn parse_retryable(s: &str) -> Option<Status> {
        Status::RETRYABLE.into_iter().find(|c| c.label() == s)
    }
}

/// A set of statuses (e.g. `retry_on`), as a bit mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatusSet(u16);

impl StatusSet {
    /// Every retryable class: the default of `retry_on`.
    pub fn all_retryable() -> Self {
        Status::RETRYABLE.into_iter().collect()
    }

    /// Whether `s` is in the set.
    #[inline]
    pub fn contains(self, s: Status) -> bool {
        self.0 & (1 << s as u8) != 0
    }

    /// Adds `s`.
    pub fn insert(&mut self, s: Status) {
        self.0 |= 1 << s as u8;
    }
}

impl FromIterator<Status> for StatusSet {
    fn from_iter<I: IntoIterator<Item = Status>>(iter: I) -> Self {
        let mut set = StatusSet::default();
        for s in iter {
            set.insert(s);
        }
        set
    }
}

/// Why a logical request ended without success.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[repr(u8)]
pub enum GiveUpReason {
    /// `max_attempts` reached.
    Attempts = 0,
    /// The next retry would start at or after the request's deadline.
    Deadline = 1,
    /// The failure is not retryable (a 400, or a class missing from `retry_on`).
    NonRetryable = 2,
    /// The rate-limit ladder ran out (`escalate_after` exceeded).
    RateLimitEscalation = 3,
    /// A retry budget refused the retry.
    Budget = 4,
    /// The circuit breaker was open.
    BreakerOpen = 5,
    /// Still open when simulated time reached `time_limit`.
    TimeLimit = 6,
}

impl GiveUpReason {
    /// Every reason, in output order.
    pub const ALL: [GiveUpReason; 7] = [
        GiveUpReason::Attempts,
        GiveUpReason::Deadline,
        GiveUpReason::NonRetryable,
        GiveUpReason::RateLimitEscalation,
        GiveUpReason::Budget,
        GiveUpReason::BreakerOpen,
        GiveUpReason::TimeLimit,
    ];

    /// The spelling in `fallback_on` and in `requests.csv`'s `outcome` column.
    pub fn label(self) -> &'static str {
        match self {
            GiveUpReason::Attempts => "attempts",
            GiveUpReason::Deadline => "deadline",
            GiveUpReason::NonRetryable => "non_retryable",
            GiveUpReason::RateLimitEscalation => "rate_limit_escalation",
            GiveUpReason::Budget => "budget",
            GiveUpReason::BreakerOpen => "breaker_open",
            GiveUpReason::TimeLimit => "time_limit",
        }
    }

    /// Parses a `fallback_on` entry (every reason except `time_limit`, which ends the run).
    pub fn parse_fallback(s: &str) -> Option<GiveUpReason> {
        GiveUpReason::ALL
            .into_iter()
            .filter(|r| *r != GiveUpReason::TimeLimit)
            .find(|r| r.label() == s)
    }
}

/// A set of give-up reasons (`fallback_on`), as a bit mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReasonSet(u8);

impl ReasonSet {
    /// Whether `r` is in the set.
    #[inline]
    pub fn contains(self, r: GiveUpReason) -> bool {
        self.0 & (1 << r as u8) != 0
    }

    /// Adds `r`.
    pub fn insert(&mut self, r: GiveUpReason) {
        self.0 |= 1 << r as u8;
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}
