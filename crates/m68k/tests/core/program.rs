//! The benchmark program (`benches/cpu_bench.rs`) as a correctness test: a
//! few million cycles of real code (loops, memory modes, mulu/divu,
//! subroutines) must compute what the model says, and a per-PC observer must
//! account for every cycle at instruction addresses only.
//!
//! ```text
//! cargo test --release -p retroprof-m68k --test core program::
//! ```

use retroprof_m68k::Stop;

use crate::bench_program::*;
use crate::host::Cpu;

#[test]
fn bench_program_computes_the_model_and_profile_adds_up() {
    check_listing();
    let budget = 5_000_000;
    let mut ram = Ram::new();
    let mut cpu = Cpu::new();
    cpu.reset(&mut ram);
    let start = cpu.cycles();
    let mut obs = PerPc {
        table: vec![0; TABLE_LEN],
        instructions: 0,
        exceptions: 0,
    };
    assert_eq!(
        cpu.run_until(&mut ram, &mut obs, start + budget),
        Stop::Target,
        "the CPU halted"
    );
    let cycles = cpu.cycles() - start;
    assert!(cycles >= budget, "run_until stopped early at {cycles}");
    assert_eq!(obs.exceptions, 0, "unexpected exceptions");
    let table_sum: u64 = obs.table.iter().sum();
    assert_eq!(
        table_sum, cycles,
        "per-PC table holds {table_sum} cycles but the run took {cycles}"
    );
    check_table(&obs.table).unwrap_or_else(|e| panic!("{e}"));
    let n = check_program(&mut cpu, &mut ram, cycles).unwrap_or_else(|e| panic!("{e}"));
    assert!(n > 100, "only {n} iterations");
}
