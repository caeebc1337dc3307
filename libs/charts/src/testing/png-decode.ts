import { inflateSync } from 'node:zlib';
import { readPngInfo } from '../png-info';

const BYTES_PER_PIXEL: Readonly<Record<number, number>> = { 0: 1, 2: 3, 4: 2, 6: 4 };

/**
 * A test-only PNG check that goes past the header: walks every chunk, inflates the IDAT stream
 * and verifies it holds exactly height scanlines of width pixels (8-bit, non-interlaced, as resvg
 * writes). Returns the raw scanlines (each prefixed with its filter byte).
 */
export function decodePngScanlines(png: Buffer): { width: number; height: number; raw: Buffer } {
  const info = readPngInfo(png);
  const bytesPerPixel = BYTES_PER_PIXEL[info.colorType];
  if (info.bitDepth !== 8 || bytesPerPixel === undefined) {
    throw new Error(`unsupported PNG: bitDepth ${info.bitDepth}, colorType ${info.colorType}`);
  }
  const idat: Buffer[] = [];
  let offset = 8;
  let sawEnd = false;
  while (offset + 12 <= png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    if (type === 'IDAT') idat.push(png.subarray(offset + 8, offset + 8 + length));
    offset += 12 + length;
    if (type === 'IEND') {
      sawEnd = true;
      break;
    }
  }
  if (!sawEnd || offset !== png.length) throw new Error('PNG truncated or has trailing bytes');
  const raw = inflateSync(Buffer.concat(idat));
  const expected = info.height * (1 + info.width * bytesPerPixel);
  if (raw.length !== expected) {
    throw new Error(`PNG pixel data is ${raw.length} bytes, expected ${expected}`);
  }
  return { width: info.width, height: info.height, raw };
}
