
// ---------------------------------------------------------------------------------------------
// Part tui.mjs — the `@mariozechner/pi-tui` shim: small components that render lines at a width
// (what `renderCall` / `renderResult`, message renderers and widgets return), the key helpers
// (`matchesKey`, `parseKey`, `Key`, `isKeyRelease`), and the width helpers. Written for pi in Rust
// after pi-tui's documented behaviour; no code of pi-tui is copied.
// ---------------------------------------------------------------------------------------------

/** The ANSI escape sequences a terminal does not display (CSI, OSC, APC). */
const ANSI = /\u001b\[[0-9;:?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b_[^\u0007\u001b]*(?:\u0007|\u001b\\)/g;

/** Where pi-tui components put the hardware cursor (an APC sequence a terminal ignores). */
const CURSOR_MARKER = "\u001b_pi:c\u0007";

/** Graphemes of a string (user-perceived characters). */
const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** The columns one grapheme takes: 0 for combining marks and zero-width characters, 2 for wide
 *  East Asian characters and emoji, 1 otherwise. */
function graphemeWidth(grapheme) {
  const cp = grapheme.codePointAt(0) ?? 0;
  if (cp === 9) return 3;
  if (cp === 0 || (cp < 32 && cp !== 9) || (cp >= 0x7f && cp < 0xa0)) return 0;
  if (/^\p{Mark}+$/u.test(grapheme) || cp === 0x200b || cp === 0x200d || (cp >= 0xfe00 && cp <= 0xfe0f)) return 0;
  if (/\p{Extended_Pictographic}/u.test(grapheme) && (cp >= 0x1f000 || grapheme.includes("\ufe0f"))) return 2;
  if (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf && cp !== 0x303f) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  ) {
    return 2;
  }
  return 1;
}

/** pi-tui's `visibleWidth`: the columns `text` takes on a terminal (ANSI escapes take none, a
 *  tab three). */
function visibleWidth(text) {
  let width = 0;
  for (const { segment } of graphemes.segment(String(text ?? "").replace(ANSI, ""))) {
    width += graphemeWidth(segment);
  }
  return width;
}

/** The pieces of `text`: ANSI escapes (width 0, kept whole) and graphemes. */
function pieces(text) {
  const out = [];
  let last = 0;
  const source = String(text ?? "");
  for (const match of source.matchAll(ANSI)) {
    for (const { segment } of graphemes.segment(source.slice(last, match.index))) out.push({ text: segment, width: graphemeWidth(segment) });
    out.push({ text: match[0], width: 0, escape: true });
    last = match.index + match[0].length;
  }
  for (const { segment } of graphemes.segment(source.slice(last))) out.push({ text: segment, width: graphemeWidth(segment) });
  return out;
}

/** The prefix of `text` within `room` columns: graphemes while they fit (a tab takes three),
 *  the ANSI escapes before each kept one; escapes after the last kept grapheme are dropped. */
function prefixWithin(text, room) {
  let out = "";
  let pending = "";
  let used = 0;
  for (const piece of pieces(text)) {
    if (piece.escape) {
      pending += piece.text;
      continue;
    }
    if (used + piece.width > room) break;
    out += pending + piece.text;
    pending = "";
    used += piece.width;
  }
  return { text: out, width: used };
}

/** pi-tui's `truncateToWidth`: `text` as it is when it fits in `maxWidth` columns; else its
 *  prefix, a style reset, `ellipsis` (itself cut when wider than `maxWidth`) and a reset. With
 *  `pad`, spaces fill the line to `maxWidth`. */
function truncateToWidth(text, maxWidth, ellipsis = "...", pad = false) {
  const source = String(text ?? "");
  const limit = Math.floor(Number(maxWidth));
  if (!(limit > 0)) return "";
  const padded = (line, width) => (pad ? line + " ".repeat(Math.max(0, limit - width)) : line);
  const width = visibleWidth(source);
  if (width <= limit) return padded(source, width);
  const reset = "\u001b[0m";
  const finish = (prefix, tail) => padded(`${prefix.text}${reset}${tail.text}${tail.text ? reset : ""}`, prefix.width + tail.width);
  const tail = String(ellipsis ?? "");
  const tailWidth = visibleWidth(tail);
  if (tailWidth >= limit) {
    const clipped = prefixWithin(tail, limit);
    return clipped.width === 0 ? padded("", 0) : finish({ text: "", width: 0 }, clipped);
  }
  return finish(prefixWithin(source, limit - tailWidth), { text: tail, width: tailWidth });
}

/** pi-tui's `wrapTextWithAnsi`: `text` word-wrapped to `width` columns, each of its lines on its
 *  own; a word longer than a line is broken; the styles open at a line break are re-opened on the
 *  next line. */
function wrapTextWithAnsi(text, width) {
  const limit = Math.max(1, Math.floor(width));
  const out = [];
  for (const line of String(text ?? "").split("\n")) {
    let current = "";
    let currentWidth = 0;
    let open = "";
    const flush = () => {
      out.push(current.replace(/\s+$/u, (spaces) => (visibleWidth(spaces) === spaces.length ? "" : spaces)));
      current = open;
      currentWidth = 0;
    };
    const words = line.split(/(\s+)/u).filter((w) => w !== "");
    for (const word of words) {
      const w = visibleWidth(word);
      const isSpace = /^\s+$/u.test(word);
      if (isSpace && currentWidth === 0 && out.length > 0 && current === open) continue;
      if (currentWidth + w <= limit) {
        current += word;
        currentWidth += w;
      } else if (isSpace) {
        flush();
      } else {
        if (currentWidth > 0 && w <= limit) flush();
        for (const piece of pieces(word)) {
          if (piece.escape) {
            current += piece.text;
            open = /\u001b\[0?m/.test(piece.text) ? "" : open + piece.text;
            continue;
          }
          if (currentWidth + piece.width > limit) flush();
          current += piece.text;
          currentWidth += piece.width;
        }
        continue;
      }
      for (const match of word.matchAll(ANSI)) open = /\u001b\[0?m/.test(match[0]) ? "" : open + match[0];
    }
    out.push(current);
  }
  return out;
}

/** Pads `line` with spaces to `width` columns. */
function padTo(line, width) {
  return line + " ".repeat(Math.max(0, width - visibleWidth(line)));
}

/** The base of the pi-tui components: renders nothing. */
/** A style that leaves its text as it is. */
const plain = (text) => String(text ?? "");

/** `lines` with `paddingX` columns each side and `paddingY` blank lines above and below, every line
 *  padded to `width` and passed through `bg` when it is a function (Text, TruncatedText, Box, Markdown). */
function padLines(lines, width, paddingX, paddingY, bg = undefined) {
  const paint = typeof bg === "function" ? bg : (line) => line;
  const margin = " ".repeat(Math.max(0, paddingX));
  const blank = new Array(Math.max(0, paddingY)).fill(paint(" ".repeat(Math.max(0, width))));
  return [...blank, ...lines.map((line) => paint(padTo(margin + line + margin, width))), ...blank];
}

class Component {
  /** Lines of the component at `width` columns. */
  render(_width) {
    return [];
  }
  /** Drops cached rendering. */
  invalidate() {}
  /** The style `name` of the component's `theme` (called on the theme), or no style. */
  style(name) {
    const theme = this.theme;
    const fn = theme?.[name];
    return typeof fn === "function" ? (text) => fn.call(theme, text) : plain;
  }
}

/** pi-tui's `Text`: word-wrapped text with `paddingX` columns each side and `paddingY` empty
 *  lines above and below, every line padded to the width; empty text renders no line. */
class Text extends Component {
  constructor(text = "", paddingX = 1, paddingY = 1, customBgFn = undefined) {
    super();
    this.text = text;
    this.paddingX = paddingX;
    this.paddingY = paddingY;
    this.customBgFn = customBgFn;
  }
  /** Replaces the text. */
  setText(text) {
    this.text = text;
  }
  /** Replaces the background function. */
  setCustomBgFn(customBgFn) {
    this.customBgFn = customBgFn;
  }
  render(width) {
    const text = String(this.text ?? "");
    if (text.trim() === "") return [];
    const inner = Math.max(1, width - 2 * Math.max(0, this.paddingX));
    const body = wrapTextWithAnsi(text.replace(/\t/g, "   "), inner);
    return padLines(body, width, this.paddingX, this.paddingY, this.customBgFn);
  }
}

/** pi-tui's `TruncatedText`: one line (the first), cut to the width. */
class TruncatedText extends Component {
  constructor(text = "", paddingX = 0, paddingY = 0) {
    super();
    this.text = text;
    this.paddingX = paddingX;
    this.paddingY = paddingY;
  }
  /** Replaces the text. */
  setText(text) {
    this.text = text;
  }
  render(width) {
    const first = String(this.text ?? "").split("\n")[0];
    const line = truncateToWidth(first, Math.max(0, width - 2 * Math.max(0, this.paddingX)));
    return padLines([line], width, this.paddingX, this.paddingY);
  }
}

/** pi-tui's `Spacer`: empty lines. */
class Spacer extends Component {
  constructor(lines = 1) {
    super();
    this.lines = lines;
  }
  /** Changes the number of lines. */
  setLines(lines) {
    this.lines = lines;
  }
  render(_width) {
    return new Array(Math.max(0, this.lines)).fill("");
  }
}

/** pi-tui's `Container`: children rendered one under the other. */
class Container extends Component {
  constructor() {
    super();
    this.children = [];
  }
  /** Appends a child. */
  addChild(child) {
    this.children.push(child);
  }
  /** Removes a child. */
  removeChild(child) {
    this.children = this.children.filter((c) => c !== child);
  }
  /** Removes every child. */
  clear() {
    this.children = [];
  }
  invalidate() {
    for (const child of this.children) child?.invalidate?.();
  }
  render(width) {
    return this.children.flatMap((child) => child?.render?.(width) ?? []);
  }
}

/** pi-tui's `Box`: children inside `paddingX` columns and `paddingY` lines of padding, every line
 *  the full width, through `bgFn` when given. */
class Box extends Container {
  constructor(paddingX = 1, paddingY = 1, bgFn = undefined) {
    super();
    this.paddingX = paddingX;
    this.paddingY = paddingY;
    this.bgFn = bgFn;
  }
  /** Replaces the background function. */
  setBgFn(bgFn) {
    this.bgFn = bgFn;
  }
  render(width) {
    const inner = Math.max(1, width - 2 * this.paddingX);
    const lines = super.render(inner);
    if (lines.length === 0) return [];
    return padLines(lines, width, this.paddingX, this.paddingY, this.bgFn);
  }
}

/** pi-tui's `Markdown`: markdown rendered to wrapped lines — headings, `-` lists, quotes, fenced code
 *  indented by two (through `theme.highlightCode` when given), rules, `**bold**`, `*italic*`, `` `code` `` and
 *  links, styled by the theme's functions. */
class Markdown extends Component {
  constructor(text = "", paddingX = 1, paddingY = 1, theme = undefined, defaultTextStyle = undefined) {
    super();
    this.text = text;
    this.paddingX = paddingX;
    this.paddingY = paddingY;
    this.theme = theme ?? {};
    this.defaultTextStyle = defaultTextStyle;
  }
  /** Replaces the text. */
  setText(text) {
    this.text = text;
  }
  /** Inline markdown styled. */
  inline(text) {
    return String(text)
      .replace(/`([^`]+)`/g, (_m, code) => this.style("code")(code))
      .replace(/\*\*([^*]+)\*\*/g, (_m, bold) => this.style("bold")(bold))
      .replace(/(^|[^*])\*([^*]+)\*/g, (_m, before, italic) => before + this.style("italic")(italic))
      .replace(/~~([^~]+)~~/g, (_m, struck) => this.style("strikethrough")(struck))
      .replace(/\[([^\]]+)\]\(([^)]+)\)/g, (_m, label, url) => `${this.style("link")(label)} ${this.style("linkUrl")(`(${url})`)}`);
  }
  render(width) {
    const inner = Math.max(1, width - 2 * this.paddingX);
    const out = [];
    const source = String(this.text ?? "").replace(/\t/g, "   ").split("\n");
    for (let i = 0; i < source.length; i++) {
      const line = source[i];
      const fence = /^\s*```(\S*)/.exec(line);
      if (fence) {
        const code = [];
        for (i++; i < source.length && !/^\s*```/.test(source[i]); i++) code.push(source[i]);
        const border = this.style("codeBlockBorder");
        out.push(border("```" + fence[1]));
        const highlighted = typeof this.theme?.highlightCode === "function" ? this.theme.highlightCode(code.join("\n"), fence[1]) : code;
        for (const codeLine of highlighted) out.push(...wrapTextWithAnsi("  " + this.style("codeBlock")(codeLine), inner));
        out.push(border("```"));
        continue;
      }
      const heading = /^(#{1,6})\s+(.*)$/.exec(line);
      if (heading) {
        out.push(...wrapTextWithAnsi(this.style("heading")(this.inline(heading[2])), inner));
        continue;
      }
      if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
        out.push(this.style("hr")("─".repeat(inner)));
        continue;
      }
      const quote = /^\s*>\s?(.*)$/.exec(line);
      if (quote) {
        for (const wrapped of wrapTextWithAnsi(this.inline(quote[1]), Math.max(1, inner - 2))) out.push(this.style("quoteBorder")("│ ") + this.style("quote")(wrapped));
        continue;
      }
      const item = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(line);
      if (item) {
        const bullet = /\d/.test(item[2]) ? item[2] : "-";
        const indent = item[1].length;
        const wrapped = wrapTextWithAnsi(this.inline(item[3]), Math.max(1, inner - indent - bullet.length - 1));
        wrapped.forEach((text, index) => {
          const lead = index === 0 ? this.style("listBullet")(bullet) + " " : " ".repeat(bullet.length + 1);
          out.push(" ".repeat(indent) + lead + text);
        });
        continue;
      }
      if (line.trim() === "") {
        if (out.length > 0 && out.at(-1) !== "") out.push("");
        continue;
      }
      const styled = this.inline(line);
      out.push(...wrapTextWithAnsi(this.defaultTextStyle?.color ? this.defaultTextStyle.color(styled) : styled, inner));
    }
    while (out.length > 0 && out.at(-1) === "") out.pop();
    if (out.length === 0) return [];
    return padLines(out, width, this.paddingX, this.paddingY);
  }
}

// --- Keys -----------------------------------------------------------------------------------

/** The names of pi-tui's `Key` (key ids) and its modifier builders. */
const SPECIAL_KEYS = [
  "escape", "esc", "enter", "return", "tab", "space", "backspace", "delete", "insert", "clear", "home", "end",
  "pageUp", "pageDown", "up", "down", "left", "right", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10",
  "f11", "f12",
];
const SYMBOL_KEYS = {
  backtick: "`", hyphen: "-", equals: "=", leftbracket: "[", rightbracket: "]", backslash: "\\", semicolon: ";",
  quote: "'", comma: ",", period: ".", slash: "/", exclamation: "!", at: "@", hash: "#", dollar: "$", percent: "%",
  caret: "^", ampersand: "&", asterisk: "*", leftparen: "(", rightparen: ")", underscore: "_", plus: "+", pipe: "|",
  tilde: "~", leftbrace: "{", rightbrace: "}", colon: ":", lessthan: "<", greaterthan: ">", question: "?",
};
const MODIFIER_BUILDERS = {
  ctrl: ["ctrl"], shift: ["shift"], alt: ["alt"], super: ["super"], ctrlShift: ["ctrl", "shift"],
  shiftCtrl: ["shift", "ctrl"], ctrlAlt: ["ctrl", "alt"], altCtrl: ["alt", "ctrl"], shiftAlt: ["shift", "alt"],
  altShift: ["alt", "shift"], ctrlSuper: ["ctrl", "super"], superCtrl: ["super", "ctrl"],
  shiftSuper: ["shift", "super"], superShift: ["super", "shift"], altSuper: ["alt", "super"],
  superAlt: ["super", "alt"], ctrlShiftAlt: ["ctrl", "shift", "alt"], ctrlShiftSuper: ["ctrl", "shift", "super"],
};

/** pi-tui's `Key`: key ids (`Key.enter`, `Key.ctrl("c")` → `"ctrl+c"`). */
const Key = Object.freeze({
  ...Object.fromEntries(SPECIAL_KEYS.map((name) => [name, name])),
  ...SYMBOL_KEYS,
  ...Object.fromEntries(Object.entries(MODIFIER_BUILDERS).map(([name, mods]) => [name, (key) => `${mods.join("+")}+${key}`])),
});

/** A key id in one spelling: modifiers sorted (`ctrl`, `alt`, `shift`, `super`), aliases folded
 *  (`esc` → `escape`, `return` → `enter`), letters lower-case. */
function normalizeKeyId(keyId) {
  const parts = String(keyId ?? "").split("+");
  let key = parts.pop() ?? "";
  if (key === "" && parts.length > 0 && parts.at(-1) === "") {
    parts.pop();
    key = "+";
  }
  const aliases = { esc: "escape", return: "enter", pageup: "pageUp", pagedown: "pageDown" };
  key = aliases[key.toLowerCase()] ?? (key.length === 1 ? key.toLowerCase() : key);
  const order = ["ctrl", "alt", "shift", "super"];
  const mods = [...new Set(parts.map((p) => p.toLowerCase()))].sort((a, b) => order.indexOf(a) - order.indexOf(b));
  return [...mods, key].join("+");
}

/** The key of a CSI sequence's final byte or `~` number. */
const CSI_KEYS = { A: "up", B: "down", C: "right", D: "left", H: "home", F: "end", P: "f1", Q: "f2", R: "f3", S: "f4", Z: "tab" };
const TILDE_KEYS = {
  1: "home", 2: "insert", 3: "delete", 4: "end", 5: "pageUp", 6: "pageDown", 7: "home", 8: "end", 11: "f1", 12: "f2",
  13: "f3", 14: "f4", 15: "f5", 17: "f6", 18: "f7", 19: "f8", 20: "f9", 21: "f10", 23: "f11", 24: "f12",
};
/** Kitty keyboard protocol codes of the keys that are not characters. */
const KITTY_CODES = { 27: "escape", 13: "enter", 9: "tab", 127: "backspace", 32: "space" };

/** The modifiers of a CSI modifier parameter (1 + shift 1, alt 2, ctrl 4, super 8). */
function modifiersOf(param) {
  const bits = Math.max(0, (Number(param) || 1) - 1);
  const mods = [];
  if (bits & 4) mods.push("ctrl");
  if (bits & 2) mods.push("alt");
  if (bits & 1) mods.push("shift");
  if (bits & 8) mods.push("super");
  return mods;
}

/** pi-tui's `parseKey`: the key id of terminal input `data` (`"\r"` → `"enter"`, `"\x03"` →
 *  `"ctrl+c"`, `"\x1b[A"` → `"up"`, a kitty `CSI u` sequence…), or `undefined`. */
function parseKey(data) {
  const s = String(data ?? "");
  if (s === "") return undefined;
  const singles = { "\r": "enter", "\n": "enter", "\t": "tab", "\u001b": "escape", "\u007f": "backspace", "\b": "ctrl+backspace", " ": "space", "\u0000": "ctrl+space" };
  if (singles[s] !== undefined) return singles[s];
  if (s.length === 1) {
    const code = s.charCodeAt(0);
    if (code >= 1 && code <= 26) return `ctrl+${String.fromCharCode(code + 96)}`;
    if (code >= 32 && code < 127) return s;
  }
  const kitty = /^\u001b\[(\d+)(?::\d+)*(?:;(\d+)(?::(\d+))?)?u$/.exec(s);
  if (kitty) {
    const code = Number(kitty[1]);
    const key = KITTY_CODES[code] ?? String.fromCodePoint(code).toLowerCase();
    return normalizeKeyId([...modifiersOf(kitty[2]), key].join("+"));
  }
  const csi = /^\u001b(?:\[|O)(?:1;)?(\d+)?(?::\d)?([A-DFHPQRSZ])$/.exec(s);
  if (csi) {
    const mods = modifiersOf(csi[1]);
    if (csi[2] === "Z") mods.push("shift");
    return normalizeKeyId([...mods, CSI_KEYS[csi[2]]].join("+"));
  }
  const tilde = /^\u001b\[(\d+)(?:;(\d+))?(?::\d)?~$/.exec(s);
  if (tilde && TILDE_KEYS[tilde[1]] !== undefined) return normalizeKeyId([...modifiersOf(tilde[2]), TILDE_KEYS[tilde[1]]].join("+"));
  if (s.length === 2 && s[0] === "\u001b" && !/[A-Z]/.test(s[1])) {
    const inner = parseKey(s[1]);
    return inner === undefined ? undefined : normalizeKeyId(`alt+${inner}`);
  }
  return undefined;
}

/** pi-tui's `matchesKey`: whether terminal input `data` is the key `keyId` (`"ctrl+c"`, `"up"`…). */
function matchesKey(data, keyId) {
  const parsed = parseKey(data);
  if (parsed === undefined) return false;
  // An upper-case letter is its key with shift (`"A"` is `shift+a`, not `a`).
  const key = /^[A-Z]$/.test(parsed) ? `shift+${parsed.toLowerCase()}` : parsed;
  return key === normalizeKeyId(keyId) && !(/^[A-Z]$/.test(String(keyId)));
}

/** pi-tui's `isKeyRelease`: a kitty key-release event (event type 3). */
function isKeyRelease(data) {
  return /^\u001b\[[\d:;]*:3[u~A-Z]$/.test(String(data ?? ""));
}

/** pi-tui's `isKeyRepeat`: a kitty key-repeat event (event type 2). */
function isKeyRepeat(data) {
  return /^\u001b\[[\d:;]*:2[u~A-Z]$/.test(String(data ?? ""));
}

/** pi-tui's `decodeKittyPrintable`: the character of a kitty `CSI u` sequence of a printable key. */
function decodeKittyPrintable(data) {
  const kitty = /^\u001b\[(\d+)(?::(\d+))?(?::\d+)?(?:;(\d+)(?::\d+)?)?u$/.exec(String(data ?? ""));
  if (!kitty) return undefined;
  const code = Number(kitty[2] ?? kitty[1]);
  if (code < 32 || code === 127 || KITTY_CODES[code] !== undefined) return undefined;
  const mods = modifiersOf(kitty[3]);
  if (mods.some((m) => m !== "shift")) return undefined;
  return String.fromCodePoint(code);
}

let kittyProtocolActive = false;

// --- Fuzzy matching -------------------------------------------------------------------------

/** pi-tui's `fuzzyMatch`: whether every character of `query` occurs in `text` in order (case
 *  ignored), and a score — lower is better (consecutive and early matches score lower). */
function fuzzyMatch(query, text) {
  const q = String(query ?? "").toLowerCase();
  const t = String(text ?? "").toLowerCase();
  if (q === "") return { matches: true, score: 0 };
  let score = 0;
  let at = -1;
  for (const c of q) {
    const found = t.indexOf(c, at + 1);
    if (found < 0) return { matches: false, score: Infinity };
    score += found - at - 1;
    at = found;
  }
  if (t.includes(q)) score -= q.length;
  return { matches: true, score };
}

/** pi-tui's `fuzzyFilter`: the items whose `getText` fuzzy-matches every word of `query`, best
 *  first. */
function fuzzyFilter(items, query, getText = (item) => String(item)) {
  const words = String(query ?? "").trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...items];
  const scored = [];
  for (const item of items) {
    const text = getText(item);
    let total = 0;
    let ok = true;
    for (const word of words) {
      const { matches, score } = fuzzyMatch(word, text);
      if (!matches) {
        ok = false;
        break;
      }
      total += score;
    }
    if (ok) scored.push({ item, total });
  }
  return scored.sort((a, b) => a.total - b.total).map((entry) => entry.item);
}

// --- Interactive components -----------------------------------------------------------------

/** pi-tui's `SelectList`: a list of `{value, label, description?}` with a selection moved by
 *  up / down, chosen with enter (`onSelect`), left with escape (`onCancel`); `setFilter` narrows it. */
class SelectList extends Component {
  constructor(items = [], maxVisible = 5, theme = undefined, layout = undefined) {
    super();
    this.items = [...items];
    this.filtered = [...items];
    this.maxVisible = maxVisible;
    this.theme = theme ?? {};
    this.layout = layout ?? {};
    this.selectedIndex = 0;
    this.onSelect = undefined;
    this.onCancel = undefined;
    this.onSelectionChange = undefined;
  }
  /** Keeps the items whose value starts with `filter`. */
  setFilter(filter) {
    const f = String(filter ?? "").toLowerCase();
    this.filtered = this.items.filter((item) => String(item.value).toLowerCase().startsWith(f));
    this.selectedIndex = 0;
  }
  /** Selects item `index`. */
  setSelectedIndex(index) {
    this.selectedIndex = Math.max(0, Math.min(index, this.filtered.length - 1));
  }
  /** The selected item. */
  getSelectedItem() {
    return this.filtered[this.selectedIndex] ?? null;
  }
  handleInput(data) {
    if (matchesKey(data, "up")) {
      if (this.filtered.length > 0) this.selectedIndex = (this.selectedIndex - 1 + this.filtered.length) % this.filtered.length;
      this.onSelectionChange?.(this.getSelectedItem());
    } else if (matchesKey(data, "down")) {
      if (this.filtered.length > 0) this.selectedIndex = (this.selectedIndex + 1) % this.filtered.length;
      this.onSelectionChange?.(this.getSelectedItem());
    } else if (matchesKey(data, "enter")) {
      const item = this.getSelectedItem();
      if (item) this.onSelect?.(item);
    } else if (matchesKey(data, "escape") || matchesKey(data, "ctrl+c")) {
      this.onCancel?.();
    }
  }
  /** The width of the label column: the widest label plus a gap of two, between the layout's
   *  `minPrimaryColumnWidth` and `maxPrimaryColumnWidth` (32 by default). */
  labelColumn() {
    const low = this.layout.minPrimaryColumnWidth ?? this.layout.maxPrimaryColumnWidth ?? 32;
    const high = this.layout.maxPrimaryColumnWidth ?? this.layout.minPrimaryColumnWidth ?? 32;
    const widest = Math.max(0, ...this.filtered.map((item) => visibleWidth(String(item.label || item.value)) + 2));
    return Math.max(Math.min(low, high), Math.min(widest, Math.max(low, high)));
  }
  /** One item's line: the label, and beyond 40 columns its description (on one line) in a second
   *  column when ten columns or more are left for it. */
  renderItem(item, selected, width, column) {
    const prefix = selected ? "→ " : "  ";
    const label = String(item.label || item.value);
    const description = item.description ? String(item.description).replace(/[\r\n]+/g, " ").trim() : "";
    if (description && width > 40) {
      const labelRoom = Math.max(1, Math.min(column, width - 6));
      const shown = truncateToWidth(label, Math.max(1, labelRoom - 2), "");
      const gap = " ".repeat(Math.max(1, labelRoom - visibleWidth(shown)));
      const left = width - 2 - visibleWidth(shown) - gap.length - 2;
      if (left > 10) {
        const text = truncateToWidth(description, left, "");
        return selected ? this.style("selectedText")(`${prefix}${shown}${gap}${text}`) : prefix + shown + this.style("description")(gap + text);
      }
    }
    const shown = truncateToWidth(label, width - 4, "");
    return selected ? this.style("selectedText")(prefix + shown) : prefix + shown;
  }
  render(width) {
    if (this.filtered.length === 0) return [this.style("noMatch")("  No matching commands")];
    const visible = Math.max(1, this.maxVisible);
    const start = Math.max(0, Math.min(this.selectedIndex - Math.floor(visible / 2), this.filtered.length - visible));
    const end = Math.min(start + visible, this.filtered.length);
    const column = this.labelColumn();
    const lines = [];
    for (let i = start; i < end; i++) lines.push(this.renderItem(this.filtered[i], i === this.selectedIndex, width, column));
    if (start > 0 || end < this.filtered.length) lines.push(this.style("scrollInfo")(truncateToWidth(`  (${this.selectedIndex + 1}/${this.filtered.length})`, width - 2, "")));
    return lines;
  }
}

/** pi-tui's `SettingsList`: settings `{id, label, currentValue, values?, description?}`; enter or
 *  space cycles the selected one through its `values` (`onChange(id, value)`), escape calls
 *  `onCancel`. */
class SettingsList extends Component {
  constructor(items = [], maxVisible = 10, theme = undefined, onChange = undefined, onCancel = undefined) {
    super();
    this.items = items;
    this.maxVisible = maxVisible;
    this.theme = theme ?? {};
    this.onChange = onChange;
    this.onCancel = onCancel;
    this.selectedIndex = 0;
  }
  /** Changes the shown value of setting `id`. */
  updateValue(id, value) {
    const item = this.items.find((i) => i.id === id);
    if (item) item.currentValue = value;
  }
  handleInput(data) {
    if (matchesKey(data, "up")) this.selectedIndex = Math.max(0, this.selectedIndex - 1);
    else if (matchesKey(data, "down")) this.selectedIndex = Math.min(this.items.length - 1, this.selectedIndex + 1);
    else if (matchesKey(data, "enter") || matchesKey(data, "space")) {
      const item = this.items[this.selectedIndex];
      if (item && Array.isArray(item.values) && item.values.length > 0) {
        const next = item.values[(item.values.indexOf(item.currentValue) + 1) % item.values.length];
        item.currentValue = next;
        this.onChange?.(item.id, next);
      }
    } else if (matchesKey(data, "escape") || matchesKey(data, "ctrl+c")) this.onCancel?.();
  }
  render(width) {
    const labelWidth = Math.min(30, Math.max(0, ...this.items.map((i) => visibleWidth(i.label ?? ""))));
    const lines = this.items.slice(0, Math.max(1, this.maxVisible)).map((item, index) => {
      const selected = index === this.selectedIndex;
      const label = padTo(String(item.label ?? item.id), labelWidth);
      const text = `${selected ? "→ " : "  "}${selected ? this.style("label")(label) : label}  ${this.style("value")(String(item.currentValue ?? ""))}`;
      return truncateToWidth(text, width);
    });
    const description = this.items[this.selectedIndex]?.description;
    if (description) lines.push("", ...wrapTextWithAnsi(this.style("description")(String(description)), Math.max(1, width - 2)).map((l) => "  " + l));
    lines.push("", truncateToWidth(this.style("hint")("  Enter/Space to change · Esc to cancel"), width));
    return lines;
  }
}

/** pi-tui's `Input`: a one-line text field (`getValue`, `setValue`, `onSubmit`, `onEscape`). */
class Input extends Component {
  constructor() {
    super();
    this.value = "";
    this.cursor = 0;
    this.focused = false;
    this.onSubmit = undefined;
    this.onEscape = undefined;
  }
  getValue() {
    return this.value;
  }
  setValue(value) {
    this.value = String(value ?? "");
    this.cursor = Math.min(this.cursor, this.value.length);
  }
  handleInput(data) {
    if (matchesKey(data, "enter")) this.onSubmit?.(this.value);
    else if (matchesKey(data, "escape")) this.onEscape?.();
    else if (matchesKey(data, "backspace")) {
      if (this.cursor > 0) {
        this.value = this.value.slice(0, this.cursor - 1) + this.value.slice(this.cursor);
        this.cursor--;
      }
    } else if (matchesKey(data, "left")) this.cursor = Math.max(0, this.cursor - 1);
    else if (matchesKey(data, "right")) this.cursor = Math.min(this.value.length, this.cursor + 1);
    else {
      const text = decodeKittyPrintable(data) ?? (/^[^\u0000-\u001f\u007f]+$/u.test(data) ? data : undefined);
      if (text !== undefined) {
        this.value = this.value.slice(0, this.cursor) + text + this.value.slice(this.cursor);
        this.cursor += text.length;
      }
    }
  }
  /** `> ` and the value, the character under the cursor (a space at the end) in reverse video,
   *  preceded by `CURSOR_MARKER` when focused. */
  render(width) {
    const before = this.value.slice(0, this.cursor);
    const [under = " ", ...rest] = [...graphemes.segment(this.value.slice(this.cursor))].map((g) => g.segment);
    const cursor = (this.focused ? CURSOR_MARKER : "") + `\u001b[7m${under}\u001b[27m`;
    const line = "> " + before + cursor + rest.join("");
    return [padTo(line, width)];
  }
}

/** pi-tui's `Editor`: a multi-line text editor — `getText`, `setText`, `insertTextAtCursor`,
 *  `handleInput` (characters, enter submits through `onSubmit`, shift+enter a new line,
 *  backspace, arrows, home / end), `onChange`; rendered between two border lines. */
class Editor extends Component {
  constructor(tui = undefined, theme = undefined, options = undefined) {
    super();
    this.tui = tui;
    this.theme = theme ?? {};
    this.options = options ?? {};
    this.lines = [""];
    this.row = 0;
    this.col = 0;
    this.focused = false;
    this.disableSubmit = false;
    this.onSubmit = undefined;
    this.onChange = undefined;
    this.borderColor = this.style("borderColor");
  }
  getText() {
    return this.lines.join("\n");
  }
  getLines() {
    return [...this.lines];
  }
  getCursor() {
    return { line: this.row, col: this.col };
  }
  setText(text) {
    this.lines = String(text ?? "").split("\n");
    this.row = this.lines.length - 1;
    this.col = this.lines[this.row].length;
    this.onChange?.(this.getText());
  }
  insertTextAtCursor(text) {
    const line = this.lines[this.row];
    const inserted = (line.slice(0, this.col) + String(text) + line.slice(this.col)).split("\n");
    const rest = line.slice(this.col);
    this.lines.splice(this.row, 1, ...inserted);
    this.row += inserted.length - 1;
    this.col = this.lines[this.row].length - rest.length;
    this.onChange?.(this.getText());
  }
  /** Adds `text` to the history (kept for the up key in pi; nothing to recall here). */
  addToHistory(_text) {}
  setAutocompleteProvider(_provider) {}
  handleInput(data) {
    if (matchesKey(data, "enter")) {
      if (!this.disableSubmit) {
        const text = this.getText();
        this.onSubmit?.(text);
      }
    } else if (matchesKey(data, "shift+enter") || data === "\n") this.insertTextAtCursor("\n");
    else if (matchesKey(data, "backspace")) {
      if (this.col > 0) {
        const line = this.lines[this.row];
        this.lines[this.row] = line.slice(0, this.col - 1) + line.slice(this.col);
        this.col--;
      } else if (this.row > 0) {
        const line = this.lines.splice(this.row, 1)[0];
        this.row--;
        this.col = this.lines[this.row].length;
        this.lines[this.row] += line;
      }
      this.onChange?.(this.getText());
    } else if (matchesKey(data, "left")) this.col = Math.max(0, this.col - 1);
    else if (matchesKey(data, "right")) this.col = Math.min(this.lines[this.row].length, this.col + 1);
    else if (matchesKey(data, "up")) {
      this.row = Math.max(0, this.row - 1);
      this.col = Math.min(this.col, this.lines[this.row].length);
    } else if (matchesKey(data, "down")) {
      this.row = Math.min(this.lines.length - 1, this.row + 1);
      this.col = Math.min(this.col, this.lines[this.row].length);
    } else if (matchesKey(data, "home") || matchesKey(data, "ctrl+a")) this.col = 0;
    else if (matchesKey(data, "end") || matchesKey(data, "ctrl+e")) this.col = this.lines[this.row].length;
    else {
      const text = decodeKittyPrintable(data) ?? (/^[^\u0000-\u0008\u000b-\u001f\u007f]+$/u.test(data) ? data : undefined);
      if (text !== undefined) this.insertTextAtCursor(text);
    }
  }
  render(width) {
    const border = this.borderColor("─".repeat(Math.max(0, width)));
    // The cursor: the character under it (a space at the end) in reverse video, after
    // `CURSOR_MARKER` when focused.
    const body = this.lines.flatMap((line, index) => {
      if (index !== this.row) return wrapTextWithAnsi(line, Math.max(1, width));
      const [under, ...rest] = [...graphemes.segment(line.slice(this.col))].map((g) => g.segment);
      const marker = this.focused ? CURSOR_MARKER : "";
      const text = line.slice(0, this.col) + marker + `\u001b[7m${under ?? " "}\u001b[0m` + rest.join("");
      return wrapTextWithAnsi(text, Math.max(1, width));
    });
    return [border, ...body.map((line) => padTo(line, width)), border];
  }
}

/** pi-tui's `Loader`: a spinner frame and a message (`start`, `stop`, `setMessage`). */
class Loader extends Component {
  constructor(tui = undefined, spinnerColorFn = plain, messageColorFn = plain, message = "Loading...") {
    super();
    this.tui = tui;
    this.spinnerColorFn = spinnerColorFn;
    this.messageColorFn = messageColorFn;
    this.message = message;
    this.frame = 0;
  }
  setMessage(message) {
    this.message = message;
  }
  start() {}
  stop() {}
  render(width) {
    const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
    return ["", truncateToWidth(`${this.spinnerColorFn(frames[this.frame % frames.length])} ${this.messageColorFn(this.message)}`, width)];
  }
}

/** pi-tui's `CancellableLoader`: a `Loader` whose escape aborts `signal` and calls `onAbort`. */
class CancellableLoader extends Loader {
  constructor(...args) {
    super(...args);
    this.controller = new AbortController();
    this.onAbort = undefined;
  }
  get signal() {
    return this.controller.signal;
  }
  get aborted() {
    return this.controller.signal.aborted;
  }
  handleInput(data) {
    if (matchesKey(data, "escape") || matchesKey(data, "ctrl+c")) {
      this.controller.abort();
      this.onAbort?.();
    }
  }
  dispose() {
    this.stop();
  }
}

/** pi-tui's `TUI`, for code that creates one or calls it: no terminal here, so it draws nothing;
 *  `requestRender` and the overlay calls do nothing. */
class TUI extends Container {
  constructor(terminal = undefined) {
    super();
    this.terminal = terminal;
  }
  requestRender() {}
  start() {}
  stop() {}
  setFocus(_component) {}
  showOverlay(_component, _options) {
    return { hide() {}, setHidden() {}, isHidden: () => true, focus() {}, unfocus() {}, isFocused: () => false };
  }
  hideOverlay() {}
  hasOverlay() {
    return false;
  }
}

/** Whether a component takes focus (has a `focused` field). */
function isFocusable(component) {
  return component !== null && typeof component === "object" && "focused" in component;
}

Object.assign(SHIMS.piTui, {
  Component, Text, TruncatedText, Markdown, Spacer, Container, Box, SelectList, SettingsList, Input, Editor, Loader,
  CancellableLoader, TUI, Key, CURSOR_MARKER, visibleWidth, truncateToWidth, wrapTextWithAnsi, matchesKey, parseKey,
  isKeyRelease, isKeyRepeat, decodeKittyPrintable, fuzzyFilter, fuzzyMatch, isFocusable,
  setKittyProtocolActive: (active) => {
    kittyProtocolActive = active === true;
  },
  isKittyProtocolActive: () => kittyProtocolActive,
  CombinedAutocompleteProvider: class CombinedAutocompleteProvider {
    constructor(commands = [], basePath = process.cwd()) {
      this.commands = commands;
      this.basePath = basePath;
    }
    getSuggestions() {
      return null;
    }
  },
});
