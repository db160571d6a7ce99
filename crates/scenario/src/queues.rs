//! Reading `links[].queue` into a [`QueueConfig`]: one function per discipline, the keys and
//! defaults in [`crate::schema`].

use netsim::queue::{Blue, ParamError};
use netsim::queue::{
    BlueConfig, DropTail, Fred, FredConfig, Pi, PiConfig, QueueConfig, Red, RedConfig, Rem, RemConfig,
};
use netsim::queue::{CoDel, CodelConfig, CodelParams, FqCodel, FqCodelConfig, Pie, PieConfig, PieDelay};
use netsim::Duration;

use crate::error::ScenarioError;
use crate::reader::{show, Reader};

/// The discipline `kind` names, with its parameters, checked for a direction of `rate_bps` and
/// `delay` (some defaults are derived from them).
pub(crate) fn read(r: &mut Reader<'_>, rate_bps: u64, delay: Duration) -> Result<QueueConfig, ScenarioError> {
    // The schema admits only the registry's kinds (`netsim::queue::KINDS`); each builds here.
    let kind = r.str("kind")?;
    let cfg = match kind.as_str() {
        DropTail::KIND => QueueConfig::DropTail { limit: r.queue_limit("limit")? },
        Red::KIND => QueueConfig::Red(red(r)?),
        Fred::KIND => QueueConfig::Fred(fred(r)?),
        Blue::KIND => QueueConfig::Blue(blue(r)?),
        Rem::KIND => QueueConfig::Rem(rem(r)?),
        Pi::KIND => QueueConfig::Pi(pi(r)?),
        CoDel::KIND => QueueConfig::CoDel(CodelConfig { limit: r.queue_limit("limit")?, params: codel(r)? }),
        FqCodel::KIND => QueueConfig::FqCodel(fq_codel(r)?),
        Pie::KIND => QueueConfig::Pie(pie(r)?),
        other => return Err(r.error("kind", format!("unknown queue discipline {other:?}"))),
    };
    cfg.check(rate_bps, delay).map_err(|e| param_error(r, e))?;
    Ok(cfg)
}

/// A discipline's parameter error at its key, showing the value the scenario gave if it gave
/// one.
pub(crate) fn param_error(r: &Reader<'_>, e: ParamError) -> ScenarioError {
    match r.given(e.key) {
        Some(v) => r.error(e.key, format!("{} is invalid: {}", show(v), e.message)),
        None => r.error(e.key, e.message),
    }
}

fn mean_pktsize(r: &mut Reader<'_>) -> Result<u32, ScenarioError> {
    let size = r.size("mean_pktsize")?;
    u32::try_from(size)
        .ok()
        .filter(|s| *s > 0)
        .ok_or_else(|| r.error("mean_pktsize", format!("{size} is out of range (expected 1 to {} bytes)", u32::MAX)))
}

fn bytes_mode(r: &mut Reader<'_>) -> Result<bool, ScenarioError> {
    Ok(r.str("mode")? == "bytes")
}

fn red(r: &mut Reader<'_>) -> Result<RedConfig, ScenarioError> {
    Ok(RedConfig {
        limit: r.queue_limit("limit")?,
        bytes: bytes_mode(r)?,
        min_th: r.opt_number("min_th")?,
        max_th: r.opt_number("max_th")?,
        w_q: r.opt_number("w_q")?,
        max_p: r.probability("max_p")?,
        gentle: r.bool("gentle")?,
        wait: r.bool("wait")?,
        mean_pktsize: mean_pktsize(r)?,
        ecn: r.bool("ecn")?,
        mark_p: r.probability("mark_p")?,
        adaptive: r.bool("adaptive")?,
        target_delay: r.duration("target_delay")?,
        interval: r.duration("interval")?,
        alpha: r.number("alpha")?,
        beta: r.number("beta")?,
        top: r.probability("top")?,
        bottom: if r.has("bottom") { Some(r.probability("bottom")?) } else { None },
    })
}

fn fred(r: &mut Reader<'_>) -> Result<FredConfig, ScenarioError> {
    Ok(FredConfig {
        limit: r.queue_limit("limit")?,
        min_th: r.number("min_th")?,
        max_th: r.number("max_th")?,
        w_q: r.number("w_q")?,
        max_p: r.probability("max_p")?,
        min_q: r.number("min_q")?,
        mean_pktsize: mean_pktsize(r)?,
        ecn: r.bool("ecn")?,
    })
}

fn blue(r: &mut Reader<'_>) -> Result<BlueConfig, ScenarioError> {
    Ok(BlueConfig {
        limit: r.queue_limit("limit")?,
        d1: r.probability("d1")?,
        d2: r.probability("d2")?,
        freeze_time: r.duration("freeze_time")?,
        increase_above: r.opt_int("increase_above")?.map(|l| l as usize),
        ecn: r.bool("ecn")?,
    })
}

fn rem(r: &mut Reader<'_>) -> Result<RemConfig, ScenarioError> {
    Ok(RemConfig {
        limit: r.queue_limit("limit")?,
        gamma: r.number("gamma")?,
        phi: r.number("phi")?,
        alpha: r.number("alpha")?,
        b_ref: r.number("b_ref")?,
        interval: r.duration("interval")?,
        inw: r.number("inw")?,
        mean_pktsize: mean_pktsize(r)?,
        bytes: bytes_mode(r)?,
        ecn: r.bool("ecn")?,
    })
}

fn pi(r: &mut Reader<'_>) -> Result<PiConfig, ScenarioError> {
    Ok(PiConfig {
        limit: r.queue_limit("limit")?,
        a: r.number("a")?,
        b: r.number("b")?,
        w: r.number("w")?,
        q_ref: r.number("q_ref")?,
        mean_pktsize: mean_pktsize(r)?,
        bytes: bytes_mode(r)?,
        ecn: r.bool("ecn")?,
    })
}

/// CoDel's parameters (`codel`, and each flow queue of `fq-codel`).
fn codel(r: &mut Reader<'_>) -> Result<CodelParams, ScenarioError> {
    Ok(CodelParams {
        target: positive_duration(r, "target")?,
        interval: positive_duration(r, "interval")?,
        ecn: r.bool("ecn")?,
    })
}

fn fq_codel(r: &mut Reader<'_>) -> Result<FqCodelConfig, ScenarioError> {
    let quantum = r.size("quantum")?;
    if quantum == 0 {
        return Err(r.error("quantum", "0 is not a positive size"));
    }
    Ok(FqCodelConfig {
        limit: r.int("limit")? as usize,
        flows: r.int("flows")? as usize,
        quantum: quantum as usize,
        drop_batch: r.int("drop_batch")? as usize,
        codel: codel(r)?,
    })
}

fn pie(r: &mut Reader<'_>) -> Result<PieConfig, ScenarioError> {
    let dq_threshold = r.size("dq_threshold")?;
    if dq_threshold == 0 {
        return Err(r.error("dq_threshold", "0 is not a positive size"));
    }
    Ok(PieConfig {
        limit: r.queue_limit("limit")?,
        target: positive_duration(r, "target")?,
        t_update: positive_duration(r, "t_update")?,
        alpha: positive_number(r, "alpha")?,
        beta: positive_number(r, "beta")?,
        max_burst: r.duration("max_burst")?,
        delay: if r.str("delay")? == "timestamp" { PieDelay::Timestamp } else { PieDelay::DepartureRate },
        dq_threshold: dq_threshold as usize,
        ecn: r.bool("ecn")?,
        mark_ecnth: r.probability("mark_ecnth")?,
        cap_drop_adjustment: r.bool("cap_drop_adjustment")?,
        derandomize: r.bool("derandomize")?,
    })
}

/// A duration that must be more than zero (`"0s"` is refused, naming the key and value).
fn positive_duration(r: &mut Reader<'_>, key: &str) -> Result<Duration, ScenarioError> {
    let d = r.duration(key)?;
    if d.is_zero() {
        let shown = r.given(key).map_or_else(|| format!("\"{d}\""), show);
        return Err(r.error(key, format!("{shown} is not a positive duration")));
    }
    Ok(d)
}

/// A number that must be more than zero.
fn positive_number(r: &mut Reader<'_>, key: &str) -> Result<f64, ScenarioError> {
    let x = r.number(key)?;
    if x <= 0.0 {
        let shown = r.given(key).map_or_else(|| x.to_string(), show);
        return Err(r.error(key, format!("{shown} must be more than zero")));
    }
    Ok(x)
}
