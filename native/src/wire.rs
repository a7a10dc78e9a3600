//! The protobuf wire format, read by hand: varints, tags, length-delimited fields, packed repeated scalars.

/// Why a message could not be read.
pub type WireResult<T> = Result<T, &'static str>;

/// One field's value as it sits on the wire.
#[derive(Clone, Copy)]
pub enum Val<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

impl<'a> Val<'a> {
    /// The value as an unsigned integer (varint or fixed), 0 for bytes.
    #[inline]
    pub fn u64(&self) -> u64 {
        match *self {
            Val::Varint(v) | Val::Fixed64(v) => v,
            Val::Fixed32(v) => v as u64,
            Val::Bytes(_) => 0,
        }
    }
    /// int32/int64/enum: a negative value is sign-extended to 64 bits on the wire.
    #[inline]
    pub fn i64(&self) -> i64 {
        self.u64() as i64
    }
    /// int32: the low 32 bits, signed (what protobuf makes of an int32 field).
    #[inline]
    pub fn i32(&self) -> i64 {
        self.u64() as u32 as i32 as i64
    }
    /// uint32: the low 32 bits.
    #[inline]
    pub fn u32(&self) -> i64 {
        self.u64() as u32 as i64
    }
    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        match *self {
            Val::Bytes(b) => b,
            _ => &[],
        }
    }
}

/// A cursor over one message's bytes.
pub struct Reader<'a> {
    pub buf: &'a [u8],
    pub pos: usize,
}

impl<'a> Reader<'a> {
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    #[inline(always)]
    pub fn varint(&mut self) -> WireResult<u64> {
        let b = self.buf;
        let mut pos = self.pos;
        if pos < b.len() && b[pos] < 0x80 {
            self.pos = pos + 1;
            return Ok(b[pos] as u64);
        }
        // two bytes: tags of fields 16-2047 (most ftrace event kinds) and small lengths and numbers
        if pos + 1 < b.len() && b[pos + 1] < 0x80 {
            self.pos = pos + 2;
            return Ok((b[pos] & 0x7f) as u64 | (b[pos + 1] as u64) << 7);
        }
        if let Some(word) = b.get(pos..pos + 8) {
            // up to 8 bytes at once (timestamps take 6-8): the terminating byte is the first without its high bit;
            // each byte's 7 payload bits are then moved down into place
            let w = u64::from_le_bytes(word.try_into().unwrap());
            let stops = !w & 0x8080_8080_8080_8080;
            if stops != 0 {
                let len = (stops.trailing_zeros() as usize + 1) / 8;
                let x = if len == 8 { w } else { w & ((1u64 << (len * 8)) - 1) };
                // the payload bits packed in three halving steps: 7-bit groups in pairs (14 bits a 16-bit lane),
                // then in fours (28 bits a 32-bit lane), then all 56 (fewer operations than moving each byte)
                let x = x & 0x7f7f_7f7f_7f7f_7f7f;
                let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
                let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
                let v = (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4);
                self.pos = pos + len;
                return Ok(v);
            }
        }
        let mut result: u64 = 0;
        let mut shift = 0u32;
        loop {
            if pos >= b.len() {
                return Err("varint cut off");
            }
            let byte = b[pos];
            pos += 1;
            if shift < 64 {
                result |= ((byte & 0x7F) as u64) << shift;
            }
            if byte < 0x80 {
                self.pos = pos;
                return Ok(result);
            }
            shift += 7;
            if shift > 63 {
                return Err("varint longer than 10 bytes");
            }
        }
    }

    /// The next field: (field number, value); None at the end of the message.
    #[inline(always)]
    pub fn field(&mut self) -> WireResult<Option<(u32, Val<'a>)>> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let tag = self.varint()?;
        let number = (tag >> 3) as u32;
        if number == 0 {
            return Err("field number 0");
        }
        // varints and lengths inline; the fixed-width types (rare in the messages read here) out of line: with only
        // two tests inline the compiler keeps conditional branches, which the CPU predicts far better than the
        // indirect jump of the jump table a four-way match compiled to (it was the costliest instruction of a read)
        let val = match tag & 7 {
            0 => Val::Varint(self.varint()?),
            2 => {
                let len = self.varint()? as usize;
                let end = self.pos.checked_add(len).ok_or("length overflows")?;
                if end > self.buf.len() {
                    return Err("length-delimited field runs past its message");
                }
                let v = &self.buf[self.pos..end];
                self.pos = end;
                Val::Bytes(v)
            }
            wt => self.fixed(wt)?,
        };
        Ok(Some((number, val)))
    }
}

impl<'a> Reader<'a> {
    /// A fixed64 or fixed32 value (wire types 1 and 5); any other wire type is an error.
    #[cold]
    #[inline(never)]
    fn fixed(&mut self, wt: u64) -> WireResult<Val<'a>> {
        let width = match wt {
            1 => 8,
            5 => 4,
            _ => return Err("unsupported wire type"),
        };
        let end = self.pos + width;
        if end > self.buf.len() {
            return Err(if width == 8 { "fixed64 cut off" } else { "fixed32 cut off" });
        }
        let b = &self.buf[self.pos..end];
        self.pos = end;
        Ok(if width == 8 {
            Val::Fixed64(u64::from_le_bytes(b.try_into().unwrap()))
        } else {
            Val::Fixed32(u32::from_le_bytes(b.try_into().unwrap()))
        })
    }
}

/// Appends the values of a repeated scalar field (packed: one length-delimited run; unpacked: one varint) to out,
/// each mapped by f.
#[inline]
pub fn repeated<T>(v: Val, out: &mut Vec<T>, f: impl Fn(u64) -> T) -> WireResult<()> {
    match v {
        Val::Bytes(b) => {
            let mut r = Reader::new(b);
            while r.pos < b.len() {
                out.push(f(r.varint()?));
            }
        }
        Val::Varint(x) => out.push(f(x)),
        _ => return Err("repeated scalar with an unexpected wire type"),
    }
    Ok(())
}

/// A string field as UTF-8 text (invalid bytes replaced, as the readers always did).
#[inline]
pub fn text(b: &[u8]) -> String {
    lossy(b).into_owned()
}

/// A string field borrowed as UTF-8 when it is valid (nearly always), else with invalid bytes replaced:
/// `String::from_utf8_lossy`'s result, reached through the standard library's fast validation first (the lossy
/// path walks the bytes chunk by chunk, which cost more than the rest of reading a print).
#[inline]
pub fn lossy(b: &[u8]) -> std::borrow::Cow<'_, str> {
    if b.is_ascii() {
        // SAFETY: bytes below 0x80 are each a complete UTF-8 character; the slice's bounds are the caller's slice
        return std::borrow::Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(b) });
    }
    match std::str::from_utf8(b) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(b),
    }
}

#[cfg(test)]
mod tests {
    use super::Reader;

    /// The varint of v, written by the encoder's rule (7 bits a byte, low first).
    fn encode(mut v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                return out;
            }
            out.push(byte | 0x80);
        }
    }

    #[test]
    fn varints_of_every_length_read_back_with_and_without_trailing_bytes() {
        // every bit width 0..64 (1 to 10 bytes), each at the end of the buffer and followed by other bytes (the
        // 8-byte word path reads past a short varint; its terminator must stop it)
        let mut values: Vec<u64> = (0..64).flat_map(|b| [1u64 << b, (1u64 << b) - 1, (1u64 << b) | 1]).collect();
        values.extend([u64::MAX, 0x7f, 0x80, 0x3fff, 0x4000, 1_700_000_000_000_000]);
        for v in values {
            for tail in [&[][..], &[0xff; 12][..], &[0x00; 3][..]] {
                let mut buf = encode(v);
                let n = buf.len();
                buf.extend_from_slice(tail);
                let mut r = Reader::new(&buf);
                assert_eq!(r.varint(), Ok(v), "value {v:#x} with {} trailing bytes", tail.len());
                assert_eq!(r.pos, n);
            }
        }
    }

    #[test]
    fn cut_off_and_overlong_varints_are_errors() {
        assert!(Reader::new(&[0x80, 0x80]).varint().is_err());
        assert!(Reader::new(&[0xff; 8]).varint().is_err());
        assert!(Reader::new(&[0xff; 11]).varint().is_err());
        // a 10-byte varint whose last byte holds more than the one bit left: the high bits are dropped, as protobuf
        let mut buf = vec![0xff; 9];
        buf.push(0x7f);
        assert_eq!(Reader::new(&buf).varint(), Ok(u64::MAX));
    }
}
