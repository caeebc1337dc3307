import { inflateSync } from 'node:zlib';

export interface DecodedPng {
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/**
 * Decodes a PNG far enough to prove it is a real image: signature, IHDR, every chunk in bounds,
 * and the inflated IDAT stream has exactly the size the header implies (non-interlaced).
 */
export function decodePng(data: Buffer): DecodedPng {
  if (!data.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG (bad signature)');
  let offset = 8;
  let header: DecodedPng | undefined;
  const idat: Buffer[] = [];
  let ended = false;
  while (offset < data.length) {
    if (offset + 8 > data.length) throw new Error('truncated chunk header');
    const length = data.readUInt32BE(offset);
    const type = data.toString('latin1', offset + 4, offset + 8);
    const body = data.subarray(offset + 8, offset + 8 + length);
    if (body.length !== length) throw new Error(`truncated ${type} chunk`);
    if (type === 'IHDR') {
      header = {
        width: body.readUInt32BE(0),
        height: body.readUInt32BE(4),
        bitDepth: body.readUInt8(8),
        colorType: body.readUInt8(9),
      };
      if (body.readUInt8(12) !== 0) throw new Error('interlaced PNGs are not expected');
    } else if (type === 'IDAT') idat.push(body);
    else if (type === 'IEND') {
      ended = true;
      break;
    }
    offset += 12 + length;
  }
  if (header === undefined || !ended || idat.length === 0)
    throw new Error('missing IHDR/IDAT/IEND');
  const channels = CHANNELS[header.colorType];
  if (channels === undefined) throw new Error(`unknown color type ${header.colorType}`);
  const rowBytes = Math.ceil((header.width * channels * header.bitDepth) / 8);
  const pixels = inflateSync(Buffer.concat(idat));
  if (pixels.length !== header.height * (1 + rowBytes)) {
    throw new Error(
      `pixel data has ${pixels.length} bytes, expected ${header.height * (1 + rowBytes)}`,
    );
  }
  return header;
}
