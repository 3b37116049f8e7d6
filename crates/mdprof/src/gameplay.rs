//! Gameplay frames first: the rule that sets frames that are not gameplay
//! aside from the load statistics.
//!
//! A game's boot and its loading screens are 100 % busy by nature (the
//! game decompresses, clears VRAM, loads its sound driver, without
//! waiting for VBlank), so a frame-budget report that mixes them with the
//! game's frames shows them as the "worst frames" and trips a
//! `--fail-over-load` gate on them. A frame is **loading** (set aside) for
//! the first reason of these that holds:
//!
//! 1. **boot**: it comes before the frame in which the first game loop
//!    started (the game never waited for VBlank before it). When no game
//!    loop is ever detected this reason does not apply (nothing tells the
//!    boot apart).
//! 2. **display off**: the display was disabled (VDP register 1 bit 6
//!    clear) during all of the frame's active lines: the picture on the
//!    TV is the border colour only. Followed through the game's register
//!    writes (the profiler's `vdp_write` events) and checked against the
//!    VDP's register at the frame's end.
//! 3. **black**: nothing but black was on screen: every colour of the
//!    palette memory (CRAM) was black at the frame's start and at its end
//!    (SGDK games fade the palette to black while they load a level:
//!    castlecat2), or, for a dropped frame (no game loop started in it),
//!    the picture the VDP's state draws at the frame's end is black on
//!    every 4th active line (the platformer's loading frames 34-46, 100 %
//!    busy, keep colours in CRAM but draw nothing). Only dropped frames are
//!    drawn, so the rule costs nothing on frames that keep up.
//! 4. **stall**: the frame is part of a run of at least [`STALL_FRAMES`]
//!    consecutive frames in which the game never waited for VBlank: one
//!    long task, not a frame over budget (an overrun spills into the next
//!    frame or two and then waits). The run's first frame is usually the
//!    one whose game loop began the task. The platformer's level loads
//!    (frames 337-361, 759-778, ...: `VDP_resetScreen`, `aplib`
//!    decompression, `VDP_loadTileSet`, `loadLevel`) are such runs, with
//!    the last gameplay picture still on screen.
//! 5. **marked**: the game marked the frame as loading itself, e.g. with a
//!    KDebug marker (the hook: [`crate::Profiler::mark_loading`], called by
//!    the observer that decodes such markers).
//!
//! Every other frame is **gameplay**. By default the worst frames list,
//! the HTML report's worst-frame picture, `--fail-over-load`, and the mean,
//! maximum and percentile loads use the counted gameplay frames only, and
//! the reports say how many frames were set aside and why;
//! `--include-loading` ([`crate::ProfileOptions::include_loading`]) sets
//! nothing aside. Dropped frames are reported for every counted frame,
//! split into gameplay ([`crate::report::Summary::dropped_frames`]) and
//! loading ([`crate::report::Summary::dropped_loading_frames`]) frames.

use serde::{Deserialize, Serialize};

/// Why a frame is not gameplay (the first reason that holds, in this
/// order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Loading {
    /// Before the first game loop.
    Boot,
    /// Display disabled during all active lines.
    DisplayOff,
    /// Nothing but black on screen.
    Black,
    /// Part of a long run of frames without a VBlank wait.
    Stall,
    /// Marked as loading by the game.
    Marked,
}

impl Loading {
    /// The name used in the JSON (`boot`, `display-off`, `marked`).
    pub fn name(self) -> &'static str {
        match self {
            Loading::Boot => "boot",
            Loading::DisplayOff => "display-off",
            Loading::Black => "black",
            Loading::Stall => "stall",
            Loading::Marked => "marked",
        }
    }
}

/// Shortest run of frames without a VBlank wait that is a stall (167 ms in
/// NTSC).
pub const STALL_FRAMES: usize = 10;

/// Which frames belong to a stall: `no_wait[i]` = the game did not wait
/// for VBlank in frame i; runs of at least [`STALL_FRAMES`]
/// such frames are stalls.
pub fn stalls(no_wait: &[bool]) -> Vec<bool> {
    let mut out = vec![false; no_wait.len()];
    let mut i = 0;
    while i < no_wait.len() {
        if !no_wait[i] {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < no_wait.len() && no_wait[j] {
            j += 1;
        }
        if j - i >= STALL_FRAMES {
            out[i..j].fill(true);
        }
        i = j;
    }
    out
}

/// The rule: why frame `frame` is loading, `None` for gameplay.
/// `first_loop`: the frame in which the first game loop started;
/// `display_shown`: the display was enabled at some time during the
/// frame's active lines; `black`: nothing but black on screen (see rule
/// 3); `stall`: part of a stall ([`stalls`]); `marked`: the game marked the frame as loading.
pub fn classify(
    frame: u64,
    first_loop: Option<u64>,
    display_shown: bool,
    black: bool,
    stall: bool,
    marked: bool,
) -> Option<Loading> {
    if matches!(first_loop, Some(fl) if frame < fl) {
        Some(Loading::Boot)
    } else if !display_shown {
        Some(Loading::DisplayOff)
    } else if black {
        Some(Loading::Black)
    } else if stall {
        Some(Loading::Stall)
    } else if marked {
        Some(Loading::Marked)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_reason_wins() {
        let c = classify;
        assert_eq!(c(3, Some(5), false, true, true, true), Some(Loading::Boot));
        assert_eq!(
            c(5, Some(5), false, true, true, true),
            Some(Loading::DisplayOff)
        );
        assert_eq!(c(5, Some(5), true, true, true, true), Some(Loading::Black));
        assert_eq!(c(5, Some(5), true, false, true, true), Some(Loading::Stall));
        assert_eq!(
            c(5, Some(5), true, false, false, true),
            Some(Loading::Marked)
        );
        assert_eq!(c(5, Some(5), true, false, false, false), None);
        // No game loop: boot does not apply.
        assert_eq!(c(0, None, true, false, false, false), None);
        assert_eq!(
            c(0, None, false, false, false, false),
            Some(Loading::DisplayOff)
        );
    }

    #[test]
    fn stalls_are_long_runs_only() {
        let mut v = vec![false; 30];
        v[2..4].fill(true); // an overrun: 2 frames
        v[10..10 + STALL_FRAMES].fill(true); // a load
        let s = stalls(&v);
        assert!(!s[2] && !s[3]);
        assert!(s[10..10 + STALL_FRAMES].iter().all(|&x| x));
        assert_eq!(s.iter().filter(|&&x| x).count(), STALL_FRAMES);
        v[10] = false; // one frame short
        assert!(stalls(&v).iter().all(|&x| !x));
    }
}
