/**
 * The few facts about a PNG the charts manifest records, read from the header instead of trusting
 * the renderer: signature, IHDR width/height.
 */
export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export interface PngInfo {
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
}

/** Parses the IHDR chunk; throws when `data` is not a PNG. */
export function readPngInfo(data: Buffer): PngInfo {
  if (data.length < 33 || !data.subarray(0, 8).equals(PNG_SIGNATURE)) {
    throw new Error('not a PNG: bad signature');
  }
  // The first chunk must be IHDR: 4-byte length (13), 'IHDR', then the 13 data bytes.
  if (data.readUInt32BE(8) !== 13 || data.toString('latin1', 12, 16) !== 'IHDR') {
    throw new Error('not a PNG: first chunk is not IHDR');
  }
  return {
    width: data.readUInt32BE(16),
    height: data.readUInt32BE(20),
    bitDepth: data.readUInt8(24),
    colorType: data.readUInt8(25),
  };
}
