// A pi 0.73 extension whose /probe command computes with the module shims and notifies the
// answers as JSON; `pi-0.73.1-shim-answers.json` holds what the same code gave with pi 0.73.1's
// own @mariozechner/pi-tui and @mariozechner/pi-coding-agent (Node 20, the npm package).
import * as tui from "@mariozechner/pi-tui";
import * as ca from "@mariozechner/pi-coding-agent";
const plainTheme = Object.fromEntries(["heading", "link", "linkUrl", "code", "codeBlock", "codeBlockBorder", "quote", "quoteBorder", "hr", "listBullet", "bold", "italic", "underline", "strikethrough"].map((n) => [n, (s) => s]));
export default function (pi) {
  pi.registerCommand("probe", {
    handler: async (_args, ctx) => {
      const t = tui, c = ca;
      const out = {
        width: ["héllo", "日本語", "emoji 😀", "\x1b[31mred\x1b[0m", "tab\tx"].map((s) => t.visibleWidth(s)),
        truncate: [["hello world", 8], ["日本語テキスト", 5], ["\x1b[31mred text\x1b[0m", 5], ["hello", 2], ["abc", 3]].map(([s, w]) => t.truncateToWidth(s, w)),
        truncatePad: t.truncateToWidth("ab", 5, "…", true),
        wrap: t.wrapTextWithAnsi("the quick brown fox jumps over the lazy dog", 10),
        text: new t.Text("hello world", 1, 1).render(8),
        keys: ["\r", "\x1b", "\x1b[A", "\x03", "A", "\x1b[97;5u", "\x1b[1;5A", "\x1bx"].map((k) => t.parseKey(k) ?? null),
        matches: [["\x03", "ctrl+c"], ["A", "shift+a"], ["A", "a"], ["\x1b[Z", "shift+tab"], ["\r", "return"], ["\x1b", "esc"]].map(([k, id]) => t.matchesKey(k, id)),
        release: [t.isKeyRelease("\x1b[97;1:3u"), t.isKeyRelease("a")],
        keyIds: [t.Key.ctrl("c"), t.Key.ctrlShift("p"), t.Key.enter, t.Key.pageUp],
        fuzzy: t.fuzzyFilter(["apple", "banana", "grape", "pineapple"], "ap", (x) => x),
        markdown: new t.Markdown("# Title\n\n- one\n- two\n\n```\ncode\n```", 0, 0, plainTheme).render(20),
        sizes: [100, 2048, 3 * 1024 * 1024].map((n) => c.formatSize(n)),
        head: (({ content, truncated, truncatedBy, outputLines, totalLines }) => ({ content, truncated, truncatedBy, outputLines, totalLines }))(c.truncateHead("a\nb\nc\nd", { maxLines: 2 })),
        tail: (({ content, lastLinePartial, truncatedBy }) => ({ content, lastLinePartial, truncatedBy }))(c.truncateTail("x\n" + "y".repeat(20), { maxBytes: 8 })),
        line: c.truncateLine("z".repeat(12), 5),
        limits: [c.DEFAULT_MAX_BYTES, c.DEFAULT_MAX_LINES],
        frontmatter: c.parseFrontmatter("---\nname: scout\ndescription: Fast recon\ntools: read, grep\n---\n\nYou are a scout.\n"),
        serialized: c.serializeConversation(c.convertToLlm([
          { role: "user", content: "hi", timestamp: 1 },
          { role: "assistant", content: [{ type: "text", text: "ok" }, { type: "toolCall", id: "1", name: "ls", arguments: { path: "." } }], timestamp: 2 },
          { role: "custom", customType: "n", content: "note", display: true, timestamp: 3 },
        ])),
        isCall: c.isToolCallEventType("bash", { toolName: "bash" }),
        box: (() => { const b = new t.Box(2, 1); b.addChild(new t.Text("inside the box", 0, 0)); return b.render(12); })(),
        truncatedText: new t.TruncatedText("a long line that will be cut", 1, 0).render(10),
        select: (() => {
          const id = (x) => x;
          const l = new t.SelectList([{ value: "a", label: "Alpha", description: "first thing" }, { value: "b", label: "Beta" }, { value: "c", label: "Gamma" }], 2, { selectedPrefix: id, selectedText: id, description: id, scrollInfo: id, noMatch: id });
          l.handleInput("\x1b[B");
          return [l.render(30), l.render(60), new t.SelectList([], 5, { selectedPrefix: id, selectedText: id, description: id, scrollInfo: id, noMatch: id }).render(30)];
        })(),
        settings: new t.SettingsList([{ id: "x", label: "Mode", currentValue: "on", values: ["on", "off"], description: "Turns it" }, { id: "y", label: "Speed", currentValue: "fast" }], 5, { label: (x) => x, value: (x) => x, description: (x) => x, cursor: "→ ", hint: (x) => x }, () => {}, () => {}).render(60),
        input: (() => { const i = new t.Input(); i.handleInput("x"); i.handleInput("y"); return i.render(10); })(),
        editor: (() => { const e = new t.Editor({ requestRender() {}, terminal: { rows: 24, columns: 80 } }, { borderColor: (x) => x, selectList: {} }); e.setText("hello\nworld"); return e.render(12); })(),
      };
      ctx.ui.notify(JSON.stringify(out));
    },
  });
}
