//! The session tree of the sidebar, laid out as pi's export lays it out: a chain of single
//! children stays flat, a branch point indents its children with `├─` / `└─` connectors and `│`
//! gutters, and the branch holding the current leaf comes first.

use std::collections::HashSet;

use pi_session_store::SessionTree;

use super::entries::{Lookup, shown_in_tree, tree_display};
use super::html::escape;

/// A gutter: at `position` (a level), a `│` when `show`.
#[derive(Clone, Copy)]
struct Gutter {
    position: usize,
    show: bool,
}

struct Placed {
    node: usize,
    indent: usize,
    show_connector: bool,
    is_last: bool,
    gutters: Vec<Gutter>,
    virtual_root_child: bool,
}

/// The newest leaf below node `index` (following the newest child down), as pi's export
/// navigates when an entry of the tree is clicked.
pub(crate) fn newest_leaf(tree: &SessionTree<'_>, mut index: usize) -> usize {
    while let Some(&last) = tree.node(index).and_then(|n| n.children.last()) {
        index = last;
    }
    index
}

/// The nodes from the root to `leaf` (as indexes).
pub(crate) fn path_to(tree: &SessionTree<'_>, leaf: Option<usize>) -> Vec<usize> {
    let mut path = Vec::new();
    let mut seen = HashSet::new();
    let mut current = leaf;
    while let Some(index) = current {
        if !seen.insert(index) {
            break;
        }
        path.push(index);
        current = tree.node(index).and_then(|n| n.parent);
    }
    path.reverse();
    path
}

/// The sidebar's rows (HTML) and the status line (`12 / 30 entries`).
pub(crate) fn render(tree: &SessionTree<'_>, leaf: Option<usize>, lookup: &Lookup<'_>) -> (String, String) {
    let nodes = tree.nodes();
    let active: HashSet<usize> = path_to(tree, leaf).into_iter().collect();
    let visible = |i: usize| Some(i) == leaf || shown_in_tree(nodes[i].entry);

    // The visible forest: each visible node hangs under its nearest visible ancestor, children
    // in the tree's (timestamp) order.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut roots = Vec::new();
    let mut nearest_visible: Vec<Option<usize>> = vec![None; nodes.len()];
    let mut walk: Vec<usize> = tree.roots().iter().rev().copied().collect();
    while let Some(index) = walk.pop() {
        let node = &nodes[index];
        let above = node
            .parent
            .and_then(|p| if visible(p) { Some(p) } else { nearest_visible[p] });
        if visible(index) {
            match above {
                Some(parent) => children[parent].push(index),
                None => roots.push(index),
            }
        }
        nearest_visible[index] = above;
        walk.extend(node.children.iter().rev());
    }

    let multiple_roots = roots.len() > 1;
    let mut ordered_roots = roots.clone();
    ordered_roots.sort_by_key(|r| !active.contains(r));
    // (placed, just_branched)
    let mut stack: Vec<(Placed, bool)> = Vec::new();
    let count = ordered_roots.len();
    for (i, &root) in ordered_roots.iter().enumerate().rev() {
        stack.push((
            Placed {
                node: root,
                indent: usize::from(multiple_roots),
                show_connector: multiple_roots,
                is_last: i + 1 == count,
                gutters: Vec::new(),
                virtual_root_child: multiple_roots,
            },
            multiple_roots,
        ));
    }
    let mut rows = String::new();
    let mut shown = 0usize;
    while let Some((placed, just_branched)) = stack.pop() {
        shown += 1;
        rows.push_str(&row(tree, &placed, multiple_roots, &active, leaf, lookup));
        let kids = &children[placed.node];
        let branching = kids.len() > 1;
        let mut ordered = kids.clone();
        ordered.sort_by_key(|c| !active.contains(c));
        let child_indent = if branching || (just_branched && placed.indent > 0) {
            placed.indent + 1
        } else {
            placed.indent
        };
        let connector_shown = placed.show_connector && !placed.virtual_root_child;
        let display_indent = if multiple_roots {
            placed.indent.saturating_sub(1)
        } else {
            placed.indent
        };
        let mut child_gutters = placed.gutters.clone();
        if connector_shown {
            child_gutters.push(Gutter {
                position: display_indent.saturating_sub(1),
                show: !placed.is_last,
            });
        }
        let count = ordered.len();
        for (i, &child) in ordered.iter().enumerate().rev() {
            stack.push((
                Placed {
                    node: child,
                    indent: child_indent,
                    show_connector: branching,
                    is_last: i + 1 == count,
                    gutters: child_gutters.clone(),
                    virtual_root_child: false,
                },
                branching,
            ));
        }
    }
    (rows, format!("{shown} / {} entries", nodes.len()))
}

fn prefix(placed: &Placed, multiple_roots: bool) -> String {
    let display_indent = if multiple_roots {
        placed.indent.saturating_sub(1)
    } else {
        placed.indent
    };
    let connector = placed.show_connector && !placed.virtual_root_child;
    let connector_level = display_indent.checked_sub(1).filter(|_| connector);
    let mut out = String::new();
    for i in 0..display_indent * 3 {
        let (level, at) = (i / 3, i % 3);
        if let Some(gutter) = placed.gutters.iter().find(|g| g.position == level) {
            out.push(if at == 0 && gutter.show { '│' } else { ' ' });
        } else if connector_level == Some(level) {
            out.push(match at {
                0 if placed.is_last => '└',
                0 => '├',
                1 => '─',
                _ => ' ',
            });
        } else {
            out.push(' ');
        }
    }
    out
}

fn row(
    tree: &SessionTree<'_>,
    placed: &Placed,
    multiple_roots: bool,
    active: &HashSet<usize>,
    leaf: Option<usize>,
    lookup: &Lookup<'_>,
) -> String {
    let node = &tree.nodes()[placed.node];
    let on_path = active.contains(&placed.node);
    let mut class = String::from("tree-node");
    if on_path {
        class.push_str(" in-path");
    }
    if Some(placed.node) == leaf {
        class.push_str(" active");
    }
    let newest = newest_leaf(tree, placed.node);
    format!(
        "<div class=\"{class}\" data-id=\"{}\" data-leaf=\"{}\"><span class=\"tree-prefix\">{}</span><span class=\"tree-marker\">{}</span><span class=\"tree-content\">{}</span></div>\n",
        escape(&node.entry.id),
        escape(&tree.nodes()[newest].entry.id),
        prefix(placed, multiple_roots),
        if on_path { "•" } else { " " },
        tree_display(node.entry, node.label, lookup)
    )
}
