//! Rate limits: token buckets for requests and tokens per minute, shared by every call
//! made through one provider session — so the items of a `pmap` take turns at the
//! provider's pace instead of running into its 429s.

use super::http::check_cancel;
use crate::error::Result;
use crate::interrupt::Cancel;
use serde_json::Value as Json;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a waiting call sleeps between looks at the bucket and at its `Cancel`.
const STEP: Duration = Duration::from_millis(25);

#[derive(Debug)]
pub struct RateLimit {
    requests: Option<Mutex<Bucket>>,
    tokens: Option<Mutex<Bucket>>,
}

/// A bucket that refills at `per_minute` and holds at most `capacity`. It starts full.
#[derive(Debug)]
struct Bucket {
    level: f64,
    capacity: f64,
    per_second: f64,
    refilled: Instant,
}

impl Bucket {
    fn new(capacity: f64, per_minute: f64) -> Bucket {
        Bucket {
            level: capacity,
            capacity,
            per_second: per_minute / 60.0,
            refilled: Instant::now(),
        }
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
        self.level = (self.level + elapsed * self.per_second).min(self.capacity);
        self.refilled = now;
    }

    /// Takes `amount` if the bucket holds it (or is full, for an amount bigger than it
    /// can ever hold); otherwise says how long until it might.
    fn take(&mut self, amount: f64, now: Instant) -> Option<Duration> {
        self.refill(now);
        let needed = amount.min(self.capacity);
        if self.level >= needed {
            self.level -= amount;
            return None;
        }
        Some(Duration::from_secs_f64(
            (needed - self.level) / self.per_second,
        ))
    }
}

impl RateLimit {
    /// Requests are paced evenly (one at a time, `60 / rpm` seconds apart); tokens may
    /// come in bursts of up to a minute's worth.
    pub fn new(requests_per_minute: Option<u32>, tokens_per_minute: Option<u64>) -> RateLimit {
        RateLimit {
            requests: requests_per_minute
                .filter(|n| *n > 0)
                .map(|n| Mutex::new(Bucket::new(1.0, f64::from(n)))),
            tokens: tokens_per_minute
                .filter(|n| *n > 0)
                .map(|n| Mutex::new(Bucket::new(n as f64, n as f64))),
        }
    }

    /// Reads `{"requests_per_minute" n "tokens_per_minute" m}` (either may be left out).
    pub fn from_json(value: &Json) -> std::result::Result<RateLimit, String> {
        let expected =
            "a map {\"requests_per_minute\" n \"tokens_per_minute\" m} of positive integers";
        let map = value.as_object().ok_or(expected)?;
        let count = |key: &str| match map.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(n) => n.as_u64().filter(|n| *n > 0).map(Some).ok_or(expected),
        };
        if map
            .keys()
            .any(|k| k != "requests_per_minute" && k != "tokens_per_minute")
        {
            return Err(expected.into());
        }
        let requests = count("requests_per_minute")?.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
        Ok(RateLimit::new(requests, count("tokens_per_minute")?))
    }

    /// Waits until a request of about `tokens` tokens may go, then counts it.
    pub fn acquire(&self, tokens: u64, cancel: &Cancel) -> Result<()> {
        for (bucket, amount) in [(&self.requests, 1.0), (&self.tokens, tokens as f64)] {
            let Some(bucket) = bucket else { continue };
            loop {
                check_cancel(cancel)?;
                let wait = match bucket.lock() {
                    Ok(mut bucket) => bucket.take(amount, Instant::now()),
                    // A panic elsewhere left the bucket: pacing is not worth failing for.
                    Err(_) => None,
                };
                match wait {
                    None => break,
                    Some(wait) => std::thread::sleep(wait.min(STEP)),
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_bucket_gives_what_it_holds_then_says_how_long_to_wait() {
        let start = Instant::now();
        let mut bucket = Bucket::new(1.0, 60.0);
        bucket.refilled = start;
        assert_eq!(bucket.take(1.0, start), None);
        let wait = bucket.take(1.0, start).unwrap();
        assert!((wait.as_secs_f64() - 1.0).abs() < 1e-9, "{wait:?}");
        assert_eq!(bucket.take(1.0, start + Duration::from_secs(1)), None);
    }

    #[test]
    fn a_request_bigger_than_the_bucket_goes_when_it_is_full() {
        let start = Instant::now();
        let mut bucket = Bucket::new(100.0, 100.0);
        bucket.refilled = start;
        assert_eq!(bucket.take(500.0, start), None);
        assert!(bucket.take(1.0, start).is_some(), "it is in debt now");
    }

    #[test]
    fn limits_are_read_from_a_map() {
        assert!(RateLimit::from_json(&json!({"requests_per_minute": 60})).is_ok());
        for bad in [
            json!(60),
            json!({"requests_per_minute": 0}),
            json!({"requests_per_minute": "fast"}),
            json!({"rpm": 60}),
        ] {
            assert!(RateLimit::from_json(&bad).is_err(), "{bad}");
        }
    }
}
