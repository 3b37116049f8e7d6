//! [`ReferenceRules`]: the reference emulator's timing rules that differ
//! from the bus-cycle timing we model, each a switch (all off by default)
//! for comparisons with it. The Z80 side (`z80.rs`) and the system
//! (`system.rs`) read them; re-exported as `crate::z80::ReferenceRules` and
//! at the crate root.

/// Timing rules of the reference emulator (Genesis Plus GX, libretro fork
/// commit 5a8389c; facts read from its `genesis.c`, `memz80.c`,
/// `sound/sound.c` and `m68k/m68kcpu.c`, no code taken) that differ from
/// the bus-cycle timing we model. Each moves the Z80's phase against the
/// 68000 by a few to a few hundred mclk. All off by default; they exist to
/// measure how much of a per-frame difference from the reference comes
/// from each rule (crates/megadrive/README.md, "What moves that phase").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReferenceRules {
    /// A 68000 write to BUSREQ (0xA11100) takes effect at its
    /// instruction's start, not at its bus cycle: the reference's 68000
    /// core adds an instruction's cycles after running it. The start is
    /// the instruction boundary plus the refresh and Z80 stall charged
    /// there (the reference adds its refresh delay before the instruction
    /// runs); exception processing before an instruction is not counted.
    pub busreq_at_insn_start: bool,
    /// The same for RESET (0xA11200).
    pub reset_at_insn_start: bool,
    /// When released from BUSREQ or RESET the Z80 restarts on the 15-mclk
    /// grid (the next multiple of 15 mclk at or after the release, and not
    /// before the Z80's own clock; the reference: "Z80 cycles should remain
    /// a multiple of 15 MClocks", counted from its frame start, the same
    /// grid as ours since NTSC and PAL frames are multiples of 15 mclk).
    pub z80_restart_grid: bool,
    /// The YM2612 busy flag ends on the 42-mclk grid counted from the
    /// frame's origin: busy until (ceil((t - origin) / 42) + 32) * 42 after
    /// the origin, where ours ends 32 * 42 mclk after the write.
    pub ym_busy_grid: bool,
    /// The 68000's loss for a Z80 bank access is taken from the Z80's mclk
    /// phase before the access's own 3-T wait, not after it.
    pub bank_stall_before_wait: bool,
    /// Z80 accesses to 0x7F00-0x7FFF (VDP, PSG) wait and stall the 68000
    /// like bank accesses (the reference routes them through its 68000-bus
    /// request; the hardware does route that window over the 68000 bus).
    pub z80_7f_waits: bool,
}

impl ReferenceRules {
    /// Every rule's name (the CLI's `--reference-rule` values) and a line
    /// on what it does, in the order of the struct's fields.
    pub const RULES: [(&'static str, &'static str); 6] = [
        (
            "busreq-at-insn-start",
            "BUSREQ writes take effect at their instruction's start",
        ),
        (
            "reset-at-insn-start",
            "RESET writes take effect at their instruction's start",
        ),
        ("z80-restart-grid", "The Z80 restarts on the 15-mclk grid"),
        (
            "ym-busy-grid",
            "The YM2612 busy flag ends on a 42-mclk grid from the frame's start",
        ),
        (
            "bank-stall-before-wait",
            "The 68000's loss for a Z80 bank access uses the phase before its wait",
        ),
        (
            "z80-7f-waits",
            "Z80 accesses to 0x7F00-0x7FFF wait like bank accesses",
        ),
    ];

    /// Every rule on.
    pub const ALL: ReferenceRules = ReferenceRules {
        busreq_at_insn_start: true,
        reset_at_insn_start: true,
        z80_restart_grid: true,
        ym_busy_grid: true,
        bank_stall_before_wait: true,
        z80_7f_waits: true,
    };

    /// The rules' switches, in the order of [`ReferenceRules::RULES`].
    fn flags(&mut self) -> [&mut bool; 6] {
        [
            &mut self.busreq_at_insn_start,
            &mut self.reset_at_insn_start,
            &mut self.z80_restart_grid,
            &mut self.ym_busy_grid,
            &mut self.bank_stall_before_wait,
            &mut self.z80_7f_waits,
        ]
    }

    /// Turn on the rule named `name` (one of [`ReferenceRules::RULES`]);
    /// false if there is no such rule.
    pub fn enable(&mut self, name: &str) -> bool {
        match Self::RULES.iter().position(|(n, _)| *n == name) {
            Some(i) => {
                *self.flags()[i] = true;
                true
            }
            None => false,
        }
    }

    /// The rules in force, by name.
    pub fn names(&self) -> Vec<&'static str> {
        let mut copy = *self;
        Self::RULES
            .iter()
            .zip(copy.flags())
            .filter(|(_, on)| **on)
            .map(|((name, _), _)| *name)
            .collect()
    }
}
