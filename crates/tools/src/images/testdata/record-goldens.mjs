// Records pi 0.73.1's resizeImage results for deterministic generated images.
const base = "/work/scratch/pi073/node_modules/@mariozechner/pi-coding-agent/dist/utils/";
const { resizeImage, formatDimensionNote } = await import(base + "image-resize.js");
const { loadPhoton } = await import(base + "photon.js");
const photon = await loadPhoton();

function xorshift(seed) { let s = seed >>> 0; return () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s; }; }
function pixels(kind, w, h, seed) {
  const px = new Uint8Array(w * h * 4);
  const rnd = xorshift(seed);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
    const i = (y * w + x) * 4;
    if (kind === "gradient") { px[i] = (x * 255 / Math.max(1, w - 1)) | 0; px[i+1] = (y * 255 / Math.max(1, h - 1)) | 0; px[i+2] = 128; }
    else { const r = rnd(); px[i] = r & 255; px[i+1] = (r >>> 8) & 255; px[i+2] = (r >>> 16) & 255; }
    px[i+3] = 255;
  }
  return px;
}
const cases = [
  { name: "small-png", kind: "gradient", w: 100, h: 50, format: "png" },
  { name: "wide-png", kind: "gradient", w: 3000, h: 1500, format: "png" },
  { name: "tall-png", kind: "gradient", w: 1200, h: 4100, format: "png" },
  { name: "square-jpeg", kind: "gradient", w: 2400, h: 2400, format: "jpeg" },
  { name: "small-jpeg", kind: "gradient", w: 640, h: 480, format: "jpeg" },
  { name: "noise-budget", kind: "noise", w: 300, h: 200, format: "png", maxBytes: 60000 },
  { name: "noise-shrink", kind: "noise", w: 300, h: 200, format: "png", maxBytes: 12000 },
  { name: "noise-big", kind: "noise", w: 2200, h: 1800, format: "png" },
];
const out = [];
for (const c of cases) {
  const img = new photon.PhotonImage(pixels(c.kind, c.w, c.h, 0x9e3779b9), c.w, c.h);
  const bytes = c.format === "png" ? img.get_bytes() : img.get_bytes_jpeg(90);
  const data = Buffer.from(bytes).toString("base64");
  const opts = c.maxBytes ? { maxBytes: c.maxBytes } : undefined;
  const r = await resizeImage({ type: "image", data, mimeType: `image/${c.format}` }, opts);
  out.push({ ...c, inputBytes: bytes.length, result: r && { mimeType: r.mimeType, width: r.width, height: r.height, originalWidth: r.originalWidth, originalHeight: r.originalHeight, wasResized: r.wasResized, encodedSize: Buffer.byteLength(r.data) }, note: r ? formatDimensionNote(r) ?? null : null });
  console.error(c.name, JSON.stringify(out.at(-1).result), out.at(-1).note);
}
console.log(JSON.stringify(out, null, 2));
