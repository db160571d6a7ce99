//! Reading `links[].queue` into a [`QueueConfig`]: one function per discipline, the keys and
//! defaults in [`crate::schema`].

use netsim::queue::{Blue, ParamError};
use netsim::queue::{
    BlueConfig, DropTail, Fred, FredConfig, Pi, PiConfig, QueueConfig, Red, RedConfig, Rem, RemConfig,
};
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
