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

    #[inline]
    pub fn varint(&mut self) -> WireResult<u64> {
        let b = self.buf;
        let mut pos = self.pos;
        if pos < b.len() && b[pos] < 0x80 {
            self.pos = pos + 1;
            return Ok(b[pos] as u64);
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
    #[inline]
    pub fn field(&mut self) -> WireResult<Option<(u32, Val<'a>)>> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let tag = self.varint()?;
        let number = (tag >> 3) as u32;
        if number == 0 {
            return Err("field number 0");
        }
        let val = match tag & 7 {
            0 => Val::Varint(self.varint()?),
            1 => {
                let end = self.pos + 8;
                if end > self.buf.len() {
                    return Err("fixed64 cut off");
                }
                let v = u64::from_le_bytes(self.buf[self.pos..end].try_into().unwrap());
                self.pos = end;
                Val::Fixed64(v)
            }
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
            5 => {
                let end = self.pos + 4;
                if end > self.buf.len() {
                    return Err("fixed32 cut off");
                }
                let v = u32::from_le_bytes(self.buf[self.pos..end].try_into().unwrap());
                self.pos = end;
                Val::Fixed32(v)
            }
            _ => return Err("unsupported wire type"),
        };
        Ok(Some((number, val)))
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
    String::from_utf8_lossy(b).into_owned()
}
