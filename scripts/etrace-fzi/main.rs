//! Decode a trace of this QEMU's E-trace encoder with FZI's riscv-etrace
//! crate and print the address of every instruction it retires, one per
//! line, as rvtrace-decode's text output does.  Built and run by
//! scripts/etrace-fzi-interop.sh (docs/decoder.rst).
//!
//!   rvpa-etrace-fzi XLEN TRACE ELF_OR_BIN[@ADDR]...
//!
//! TRACE: the RAM sink's bytes (encapsulated packets, 2.0 layout, no
//! source id).  An ELF's loadable segments are placed at their addresses;
//! a FILE@ADDR is raw code at ADDR (hexadecimal).
//
// Copyright (c) 2026 The rvpa authors
// SPDX-License-Identifier: GPL-2.0-or-later
use riscv_etrace::binary::{self, Adaptable};
use riscv_etrace::config::{self, AddressMode};
use riscv_etrace::instruction::base;
use riscv_etrace::packet::unit::{self, IOptions, NoOptions, Unit};
use riscv_etrace::packet::{self, Error, decoder::Decoder, encap};
use riscv_etrace::tracer::{self, item};
use std::num::NonZeroU8;

/// This encoder's support packet options (hw-riscv-trace/codec/include/etrace.h)
#[derive(Copy, Clone, Debug, Default)]
struct Options(u16);

impl Options {
    fn bit(&self, n: u32) -> bool {
        self.0 >> n & 1 != 0
    }
}

impl IOptions for Options {
    fn address_mode(&self) -> Option<AddressMode> {
        Some(AddressMode::from_full(self.bit(0)))
    }
    fn implicit_exception(&self) -> Option<bool> {
        Some(self.bit(1))
    }
    fn sequentially_inferred_jumps(&self) -> Option<bool> {
        Some(self.bit(2))
    }
    fn implicit_return(&self) -> Option<bool> {
        Some(self.0 >> 3 & 3 != 0)
    }
    fn branch_prediction(&self) -> Option<bool> {
        Some(self.bit(5))
    }
    fn jump_target_cache(&self) -> Option<bool> {
        Some(self.bit(6))
    }
}

/// The unit: 1-bit encoder mode, 12 option bits, no data options.  The
/// crate reads bits only for its own types: the 12 bits are read as its
/// reference unit's 5 option bits, then as its PULP unit's 7.
#[derive(Copy, Clone, Debug, Default)]
struct Rvpa;

impl<U> Unit<U> for Rvpa {
    type IOptions = Options;
    type DOptions = NoOptions;

    fn encoder_mode_width(&self) -> u8 {
        1
    }

    fn decode_ioptions(decoder: &mut Decoder<U>) -> Result<Options, Error> {
        let r: unit::ReferenceIOptions = decoder.decode()?;
        let p: unit::PULPIOptions = decoder.decode()?;
        let bits = [
            r.implicit_return,
            r.implicit_exception,
            r.full_address,
            r.jump_target_cache,
            r.branch_prediction,
            p.jump_target_cache,
            p.branch_prediction,
            p.implicit_return,
            p.sijump,
            p.implicit_exception,
            p.full_address,
            p.delta_address,
        ];
        Ok(Options(
            bits.iter().rev().fold(0, |v, &b| v << 1 | b as u16),
        ))
    }

    fn decode_doptions(decoder: &mut Decoder<U>) -> Result<NoOptions, Error> {
        decoder.decode()
    }
}

/// The loadable segments of an ELF (32 or 64-bit, little-endian)
fn elf_segments(data: &[u8]) -> Vec<(u64, Vec<u8>)> {
    let rd = |off: usize, n: usize| -> u64 {
        data[off..off + n]
            .iter()
            .rev()
            .fold(0, |v, &b| v << 8 | b as u64)
    };
    let is64 = data[4] == 2;
    let (phoff, phentsize, phnum) = if is64 {
        (
            rd(0x20, 8) as usize,
            rd(0x36, 2) as usize,
            rd(0x38, 2) as usize,
        )
    } else {
        (
            rd(0x1c, 4) as usize,
            rd(0x2a, 2) as usize,
            rd(0x2c, 2) as usize,
        )
    };
    let mut out = Vec::new();
    for i in 0..phnum {
        let ph = phoff + i * phentsize;
        if rd(ph, 4) != 1 {
            continue; // not PT_LOAD
        }
        let (off, vaddr, filesz) = if is64 {
            (rd(ph + 8, 8), rd(ph + 16, 8), rd(ph + 32, 8))
        } else {
            (rd(ph + 4, 4), rd(ph + 8, 4), rd(ph + 16, 4))
        };
        let (off, filesz) = (off as usize, filesz as usize);
        out.push((vaddr, data[off..off + filesz].to_vec()));
    }
    out
}

/// The instructions so far out, then the reason the crate stopped
fn stop(out: &mut impl std::io::Write, why: String) -> ! {
    out.flush().unwrap();
    eprintln!("{why}");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    assert!(
        args.len() >= 4,
        "usage: {} XLEN TRACE ELF_OR_BIN[@ADDR]...",
        args[0]
    );
    let xlen: u8 = args[1].parse().expect("XLEN");
    let trace = std::fs::read(&args[2]).expect("the trace");
    let set = if xlen == 32 {
        base::Set::Rv32I
    } else {
        base::Set::Rv64I
    };

    let mut bins: Vec<binary::boxed::Binary<'static, _>> = Vec::new();
    for spec in &args[3..] {
        let (path, addr) = match spec.rsplit_once('@') {
            Some((p, a)) => (
                p,
                Some(u64::from_str_radix(a.trim_start_matches("0x"), 16).expect("ADDR")),
            ),
            None => (spec.as_str(), None),
        };
        let data = std::fs::read(path).expect("an image");
        let segs = match addr {
            Some(a) => vec![(a, data)],
            None => elf_segments(&data),
        };
        for (base_addr, code) in segs {
            bins.push(
                binary::from_segment(code, set)
                    .with_offset(base_addr)
                    .boxed(),
            );
        }
    }

    // this encoder's parameters (its discovery registers, docs/rvtrace.rst)
    let params = config::Parameters {
        cache_size_p: 4,
        call_counter_size_p: 4,
        context_width_p: NonZeroU8::new(if xlen == 32 { 9 } else { 16 }).unwrap(),
        time_width_p: NonZeroU8::MIN,
        ecause_width_p: NonZeroU8::new(6).unwrap(),
        f0s_width_p: 1,
        iaddress_lsb_p: 1,
        iaddress_width_p: NonZeroU8::new(xlen).unwrap(),
        nocontext_p: false,
        notime_p: true,
        privilege_width_p: NonZeroU8::new(3).unwrap(),
        return_stack_size_p: 4,
        sijump_p: true,
    };
    let mut decoder = packet::builder()
        .for_unit(Rvpa)
        .with_params(&params)
        .with_trace_type_width(0)
        .decoder(&trace);
    let mut tracer: tracer::Tracer<_, riscv_etrace::types::stack::VecStack> = tracer::builder()
        .with_binary(binary::Multi::from(bins))
        .with_params(&params)
        .build()
        .expect("the tracer");

    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let (mut packets, mut insns) = (0u64, 0u64);
    while decoder.bytes_left() > 0 {
        let packet: encap::Packet<Decoder<Rvpa>> = match decoder.decode() {
            Ok(p) => p,
            Err(e) => stop(&mut out, format!("packet {packets}: {e:?}")),
        };
        let Some(normal) = packet.into_normal() else {
            continue;
        };
        if normal.flow() != 0 {
            continue; // data trace
        }
        packets += 1;
        let payload = normal.decode_payload().expect("a payload");
        if let Err(e) = tracer.process_payload(&payload) {
            stop(&mut out, format!("packet {packets} ({payload:?}): {e:?}"));
        }
        for i in tracer.by_ref() {
            let item = match i {
                Ok(item) => item,
                Err(e) => stop(&mut out, format!("packet {packets} ({payload:?}): {e:?}")),
            };
            if let item::Kind::Regular(_) = item.kind() {
                use std::io::Write;
                writeln!(out, "0x{:x}", item.pc()).unwrap();
                insns += 1;
            }
        }
    }
    eprintln!("{packets} packets, {insns} instructions");
}
