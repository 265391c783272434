// The RIFF/WAVE container for PCM: reading a file's format and sample data (the player) and
// writing the 44-byte header (the recorder), so both agree on one reading of the format.

export interface WavFormat {
  /** 1 = integer PCM, 3 = float, 6 = A-law, 7 = mu-law, 0xFFFE = extensible. */
  formatCode: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
}

export interface ParsedWav extends WavFormat {
  /** Byte offset and length of the `data` chunk's samples. */
  dataOffset: number;
  dataLength: number;
  /** The size fields as written in the file (a crashed recorder leaves them 0). */
  riffSize: number;
}

export const WAV_HEADER_BYTES = 44;

export class WavFormatError extends Error {
  override name = "WavFormatError";
}

/** Reads the chunk list of a WAVE file held in `bytes`; throws WavFormatError if it is not one. */
export function parseWav(bytes: Buffer): ParsedWav {
  if (bytes.length < 12 || bytes.toString("ascii", 0, 4) !== "RIFF" || bytes.toString("ascii", 8, 12) !== "WAVE") {
    throw new WavFormatError("not a RIFF/WAVE file");
  }
  const riffSize = bytes.readUInt32LE(4);
  let format: WavFormat | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString("ascii", offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === "fmt ") {
      if (size < 16 || body + 16 > bytes.length) throw new WavFormatError("fmt chunk too short");
      let formatCode = bytes.readUInt16LE(body);
      // WAVE_FORMAT_EXTENSIBLE keeps the real format code at the start of its sub-format GUID.
      if (formatCode === 0xfffe && size >= 40 && body + 26 <= bytes.length) formatCode = bytes.readUInt16LE(body + 24);
      format = {
        formatCode,
        channels: bytes.readUInt16LE(body + 2),
        sampleRate: bytes.readUInt32LE(body + 4),
        bitsPerSample: bytes.readUInt16LE(body + 14),
      };
    } else if (id === "data") {
      if (!format) throw new WavFormatError("data chunk before fmt chunk");
      // A streamed or unfinished file may carry a size of 0 or 0xFFFFFFFF: take what is there.
      const available = bytes.length - body;
      const dataLength = size === 0 || size > available ? available : size;
      return { ...format, dataOffset: body, dataLength, riffSize };
    }
    offset = body + size + (size & 1);
  }
  throw new WavFormatError(format ? "no data chunk" : "no fmt chunk");
}

/** The canonical 44-byte header for integer PCM with `dataLength` bytes of samples. */
export function wavHeader(format: Omit<WavFormat, "formatCode">, dataLength: number): Buffer {
  const h = Buffer.alloc(WAV_HEADER_BYTES);
  const blockAlign = (format.channels * format.bitsPerSample) / 8;
  h.write("RIFF", 0, "ascii");
  h.writeUInt32LE(36 + dataLength, 4);
  h.write("WAVE", 8, "ascii");
  h.write("fmt ", 12, "ascii");
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(format.channels, 22);
  h.writeUInt32LE(format.sampleRate, 24);
  h.writeUInt32LE(format.sampleRate * blockAlign, 28);
  h.writeUInt16LE(blockAlign, 32);
  h.writeUInt16LE(format.bitsPerSample, 34);
  h.write("data", 36, "ascii");
  h.writeUInt32LE(dataLength, 40);
  return h;
}
