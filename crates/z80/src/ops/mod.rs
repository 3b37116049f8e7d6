//! The opcode tables: unprefixed and DD/FD (`unprefixed`), CB and
//! DDCB/FDCB (`cb`), ED with the block instructions (`ed`).

mod cb;
mod ed;
mod unprefixed;
