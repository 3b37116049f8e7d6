//! Linker map parsers (MS LINK, Borland TLINK, OpenWatcom wlink, GNU ld,
//! cc65 debug files) and format detection (being written).
