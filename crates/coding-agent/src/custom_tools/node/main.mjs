
// ---------------------------------------------------------------------------------------------
// Part main.mjs — picks the mode from argv: `--extensions <entry>...` runs the extension host,
// `<entry>` the custom-tool host. Nothing runs in the copy Node's loader thread evaluates for the
// module hooks (`?pi-hooks`).
// ---------------------------------------------------------------------------------------------

if (!import.meta.url.endsWith(HOOKS_QUERY)) {
  const args = process.argv.slice(2);
  if (args[0] === "--extensions") {
    startExtensionHost(args.slice(1));
  } else if (args[0] === undefined) {
    process.stderr.write("usage: node host.mjs <tool module>\n       node host.mjs --extensions <extension entry>...\n");
    process.exit(2);
  } else {
    startHost(args[0]);
  }
}
