(function () {
  "use strict";
  // parent of every entry, and the entries the page shows first (the path to the leaf)
  var parents = JSON.parse(document.getElementById("session-tree").textContent);

  function pathTo(id) {
    var path = {};
    var seen = 0;
    while (id && !path[id] && seen < 1000000) {
      path[id] = true;
      id = parents[id];
      seen += 1;
    }
    return path;
  }

  function show(leafId, targetId) {
    var path = pathTo(leafId);
    var entries = document.querySelectorAll("#messages [data-entry]");
    for (var i = 0; i < entries.length; i++) {
      entries[i].hidden = !path[entries[i].getAttribute("data-entry")];
    }
    var nodes = document.querySelectorAll(".tree-node");
    for (var j = 0; j < nodes.length; j++) {
      var id = nodes[j].getAttribute("data-id");
      nodes[j].classList.toggle("in-path", !!path[id]);
      nodes[j].classList.toggle("active", id === targetId);
      nodes[j].querySelector(".tree-marker").textContent = path[id] ? "\u2022" : " ";
    }
    var target = document.getElementById("entry-" + targetId);
    if (target && !target.hidden) target.scrollIntoView({ block: "start" });
  }

  document.getElementById("tree-container").addEventListener("click", function (event) {
    if (String(window.getSelection())) return;
    var node = event.target.closest(".tree-node");
    if (node) show(node.getAttribute("data-leaf"), node.getAttribute("data-id"));
  });

  document.addEventListener("click", function (event) {
    if (String(window.getSelection())) return;
    var button = event.target.closest("[data-action]");
    if (button) {
      var action = button.getAttribute("data-action");
      document.body.classList.toggle(action === "toggle-thinking" ? "hide-thinking" : "hide-tools");
      return;
    }
    var image = event.target.closest(".message-image, .tool-image");
    var modal = document.getElementById("image-modal");
    if (image) {
      document.getElementById("modal-image").src = image.src;
      modal.classList.add("open");
      return;
    }
    if (event.target.closest("#image-modal")) {
      modal.classList.remove("open");
      return;
    }
    var params = event.target.closest(".tool-item");
    if (params) {
      params.classList.toggle("params-expanded");
      return;
    }
    var expandable = event.target.closest(".expandable");
    if (expandable) expandable.classList.toggle("expanded");
  });

  document.addEventListener("keydown", function (event) {
    if (event.target.closest("input, textarea") || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "t" || event.key === "T") document.body.classList.toggle("hide-thinking");
    if (event.key === "o" || event.key === "O") document.body.classList.toggle("hide-tools");
    if (event.key === "Escape") document.getElementById("image-modal").classList.remove("open");
  });

  document.body.setAttribute("data-ready", "true");
})();
