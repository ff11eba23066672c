//! `tic-tac-toe` as native Rust custom tools (PR #3345's example): the model plays O by moving a
//! cursor and playing; X answers at once in the first free cell. Every move sleeps 300 ms and
//! `play` does not, so the tools must run `sequential`: in parallel, `play` lands before the moves
//! and marks the wrong cell. `TIC_TAC_TOE_MODE=parallel` declares them parallel to show exactly that.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use pi_agent_core::{AgentTool, ToolContext, ToolError, ToolExecutionMode, ToolParameters, ToolResult};
use pi_coding_agent::custom_tools::schema::Type;
use pi_coding_agent::custom_tools::{CustomTool, FactoryError, NamedFactory, ToolApi, ToolSessionEvent};
use serde_json::{Value, json};

/// How long a move takes.
pub(crate) const MOVE_DELAY: Duration = Duration::from_millis(300);

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Game {
    board: [[String; 3]; 3],
    cursor: [usize; 2],
    status: String,
}

impl Game {
    fn new() -> Self {
        Game {
            status: "playing".into(),
            ..Default::default()
        }
    }

    fn winner(&self) -> Option<String> {
        let b = &self.board;
        let lines = [
            [(0, 0), (0, 1), (0, 2)],
            [(1, 0), (1, 1), (1, 2)],
            [(2, 0), (2, 1), (2, 2)],
            [(0, 0), (1, 0), (2, 0)],
            [(0, 1), (1, 1), (2, 1)],
            [(0, 2), (1, 2), (2, 2)],
            [(0, 0), (1, 1), (2, 2)],
            [(0, 2), (1, 1), (2, 0)],
        ];
        lines.iter().find_map(|line| {
            let first = &b[line[0].0][line[0].1];
            (!first.is_empty() && line.iter().all(|&(r, c)| &b[r][c] == first)).then(|| first.clone())
        })
    }

    fn settle(&mut self) {
        if let Some(winner) = self.winner() {
            self.status = format!("{winner} wins");
        } else if self.board.iter().flatten().all(|cell| !cell.is_empty()) {
            self.status = "draw".into();
        }
    }

    fn render(&self) -> String {
        let mut rows = Vec::new();
        for (r, row) in self.board.iter().enumerate() {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(c, cell)| {
                    let mark = if cell.is_empty() { "." } else { cell.as_str() };
                    if [r, c] == self.cursor {
                        format!("<{mark}>")
                    } else {
                        format!(" {mark} ")
                    }
                })
                .collect();
            rows.push(cells.join("|"));
        }
        format!(
            "{}\nCursor: ({}, {}). Status: {}.",
            rows.join("\n"),
            self.cursor[0],
            self.cursor[1],
            self.status
        )
    }

    fn details(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

type Shared = Arc<Mutex<Game>>;

fn lock(game: &Shared) -> std::sync::MutexGuard<'_, Game> {
    game.lock().unwrap_or_else(|p| p.into_inner())
}

struct Play {
    game: Shared,
    mode: ToolExecutionMode,
    parameters: ToolParameters,
}

struct SeeBoard {
    game: Shared,
    parameters: ToolParameters,
}

/// The factory: both tools share one game; `TIC_TAC_TOE_MODE=parallel` declares `tic_tac_toe`
/// parallel.
pub(crate) fn factory() -> NamedFactory {
    let mode = match std::env::var("TIC_TAC_TOE_MODE").as_deref() {
        Ok("parallel") => ToolExecutionMode::Parallel,
        _ => ToolExecutionMode::Sequential,
    };
    factory_with_mode(mode)
}

/// The factory with `tic_tac_toe` declared `mode`.
pub(crate) fn factory_with_mode(mode: ToolExecutionMode) -> NamedFactory {
    NamedFactory::new(
        "tic-tac-toe",
        move |_api: &ToolApi| -> Result<Vec<Arc<dyn CustomTool>>, FactoryError> {
            let game: Shared = Arc::new(Mutex::new(Game::new()));
            let action = Type::string_enum(["move_up", "move_down", "move_left", "move_right", "play"]).description(
            "The single action to perform this call. Emit multiple tic_tac_toe calls in one response to string actions together.",
        );
            Ok(vec![
                Arc::new(Play {
                    game: game.clone(),
                    mode,
                    parameters: ToolParameters::new(Type::object([("action", action)]).to_value()),
                }),
                Arc::new(SeeBoard {
                    game,
                    parameters: ToolParameters::new(json!({"type": "object", "properties": {}})),
                }),
            ])
        },
    )
}

#[async_trait]
impl AgentTool for Play {
    fn name(&self) -> &str {
        "tic_tac_toe"
    }
    fn label(&self) -> &str {
        "Tic-Tac-Toe"
    }
    fn description(&self) -> &str {
        "Play tic-tac-toe as O: move your cursor (move_up, move_down, move_left, move_right) and play to place O \
         at the cursor. X answers at once."
    }
    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }
    fn execution_mode(&self) -> Option<ToolExecutionMode> {
        Some(self.mode)
    }
    async fn execute(&self, _id: &str, args: Value, _ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let action = args["action"].as_str().unwrap_or_default().to_owned();
        if action != "play" {
            tokio::time::sleep(MOVE_DELAY).await;
        }
        let mut game = lock(&self.game);
        if game.status != "playing" {
            return Err(ToolError::new(format!("Game is over ({}).", game.status)));
        }
        let [r, c] = game.cursor;
        let text = match action.as_str() {
            "move_up" | "move_down" | "move_left" | "move_right" => {
                game.cursor = match action.as_str() {
                    "move_up" => [r.saturating_sub(1), c],
                    "move_down" => [(r + 1).min(2), c],
                    "move_left" => [r, c.saturating_sub(1)],
                    _ => [r, (c + 1).min(2)],
                };
                let direction = action.trim_start_matches("move_");
                format!("Moved {direction}. Cursor: ({}, {})", game.cursor[0], game.cursor[1])
            }
            "play" => {
                if !game.board[r][c].is_empty() {
                    return Err(ToolError::new(format!(
                        "Cell ({r}, {c}) is already {}. Your cursor is still at ({r}, {c}). Move to an empty cell and retry play.",
                        game.board[r][c]
                    )));
                }
                game.board[r][c] = "O".into();
                game.cursor = [0, 0];
                game.settle();
                let mut text = format!("Placed O at ({r}, {c}). Cursor reset to (0, 0).");
                if game.status == "playing" {
                    let free = (0..9)
                        .map(|i| (i / 3, i % 3))
                        .find(|&(r, c)| game.board[r][c].is_empty());
                    if let Some((xr, xc)) = free {
                        game.board[xr][xc] = "X".into();
                        game.settle();
                        text.push_str(&format!(" X played ({xr}, {xc})."));
                    }
                }
                text.push_str(&format!(" Status: {}.", game.status));
                text
            }
            other => return Err(ToolError::new(format!("Unknown action: {other}"))),
        };
        Ok(ToolResult::text(text).with_details(game.details()))
    }
}

#[async_trait]
impl CustomTool for Play {
    /// `tic_tac_toe <action>` (pi's example renders the same).
    fn render_call(&self, args: &Value, theme: &pi_tui::Theme) -> Option<Vec<pi_tui::Line>> {
        let action = args["action"].as_str().unwrap_or("…").to_owned();
        Some(vec![pi_tui::Line::from(vec![
            theme.bold("tic_tac_toe "),
            theme.fg(pi_tui::Slot::Muted, action),
        ])])
    }

    /// ✓ and the text, or ✗ and the error; the board when expanded.
    fn render_result(
        &self,
        result: &ToolResult,
        options: pi_coding_agent::custom_tools::RenderResultOptions,
        theme: &pi_tui::Theme,
    ) -> Option<Vec<pi_tui::Line>> {
        let text: String = result.content.iter().filter_map(|b| b.as_text()).collect();
        let mark = if options.is_error {
            theme.fg(pi_tui::Slot::Error, "✗ ")
        } else {
            theme.fg(pi_tui::Slot::Success, "✓ ")
        };
        let mut lines = vec![pi_tui::Line::from(vec![mark, theme.fg(pi_tui::Slot::Muted, text)])];
        if options.expanded
            && let Ok(game) = serde_json::from_value::<Game>(result.details.clone())
        {
            lines.extend(game.render().lines().map(|row| pi_tui::Line::from(row.to_owned())));
        }
        Some(lines)
    }

    async fn on_session(&self, event: &ToolSessionEvent) {
        let restored = event
            .result_details("tic_tac_toe")
            .filter_map(|details| serde_json::from_value::<Game>(details.clone()).ok())
            .last()
            .unwrap_or_else(Game::new);
        *lock(&self.game) = restored;
    }
}

#[async_trait]
impl AgentTool for SeeBoard {
    fn name(&self) -> &str {
        "tic_tac_toe_see_board"
    }
    fn label(&self) -> &str {
        "See Board"
    }
    fn description(&self) -> &str {
        "Show the tic-tac-toe board with your cursor marked <…>."
    }
    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }
    async fn execute(&self, _id: &str, _args: Value, _ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let game = lock(&self.game);
        Ok(ToolResult::text(game.render()).with_details(game.details()))
    }
}

impl CustomTool for SeeBoard {}
