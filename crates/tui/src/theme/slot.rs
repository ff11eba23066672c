//! The colour tokens of pi's theme files.

/// The number of colour tokens of pi's theme files.
pub(crate) const SLOT_COUNT: usize = 51;

/// A colour token of pi's theme files, named as pi names it (`Slot::MdHeading` is `mdHeading`).
/// Six are backgrounds ([`Slot::is_background`]); the others colour text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Slot {
    /// `accent`: Primary accent (logo, selected items, cursor).
    Accent,
    /// `border`: Normal borders.
    Border,
    /// `borderAccent`: Highlighted borders.
    BorderAccent,
    /// `borderMuted`: Subtle borders (the editor's).
    BorderMuted,
    /// `success`: Success states.
    Success,
    /// `error`: Error states.
    Error,
    /// `warning`: Warning states.
    Warning,
    /// `muted`: Secondary text.
    Muted,
    /// `dim`: Tertiary text.
    Dim,
    /// `text`: Default text (usually the terminal's own colour).
    Text,
    /// `thinkingText`: Thinking block text.
    ThinkingText,
    /// `selectedBg`: Background of the selected line.
    SelectedBg,
    /// `userMessageBg`: Background of the user's messages.
    UserMessageBg,
    /// `userMessageText`: Text of the user's messages.
    UserMessageText,
    /// `customMessageBg`: Background of extension messages.
    CustomMessageBg,
    /// `customMessageText`: Text of extension messages.
    CustomMessageText,
    /// `customMessageLabel`: Label of extension messages.
    CustomMessageLabel,
    /// `toolPendingBg`: Background of a running tool block.
    ToolPendingBg,
    /// `toolSuccessBg`: Background of a finished tool block.
    ToolSuccessBg,
    /// `toolErrorBg`: Background of a failed tool block.
    ToolErrorBg,
    /// `toolTitle`: Tool names in tool blocks.
    ToolTitle,
    /// `toolOutput`: A tool's output.
    ToolOutput,
    /// `mdHeading`: Markdown headings.
    MdHeading,
    /// `mdLink`: Link texts.
    MdLink,
    /// `mdLinkUrl`: Link targets, shown after the text.
    MdLinkUrl,
    /// `mdCode`: Inline code.
    MdCode,
    /// `mdCodeBlock`: Code block text without highlighting.
    MdCodeBlock,
    /// `mdCodeBlockBorder`: The fences around a code block.
    MdCodeBlockBorder,
    /// `mdQuote`: Block quote text.
    MdQuote,
    /// `mdQuoteBorder`: The bar before quoted lines.
    MdQuoteBorder,
    /// `mdHr`: Horizontal rules.
    MdHr,
    /// `mdListBullet`: List bullets and numbers.
    MdListBullet,
    /// `toolDiffAdded`: Added lines of a diff.
    ToolDiffAdded,
    /// `toolDiffRemoved`: Removed lines of a diff.
    ToolDiffRemoved,
    /// `toolDiffContext`: Context lines of a diff.
    ToolDiffContext,
    /// `syntaxComment`: Comments in code.
    SyntaxComment,
    /// `syntaxKeyword`: Keywords in code.
    SyntaxKeyword,
    /// `syntaxFunction`: Function names in code.
    SyntaxFunction,
    /// `syntaxVariable`: Variables in code.
    SyntaxVariable,
    /// `syntaxString`: String literals in code.
    SyntaxString,
    /// `syntaxNumber`: Number literals and constants in code.
    SyntaxNumber,
    /// `syntaxType`: Type names in code.
    SyntaxType,
    /// `syntaxOperator`: Operators in code.
    SyntaxOperator,
    /// `syntaxPunctuation`: Punctuation in code.
    SyntaxPunctuation,
    /// `thinkingOff`: Editor border with thinking off.
    ThinkingOff,
    /// `thinkingMinimal`: Editor border with minimal thinking.
    ThinkingMinimal,
    /// `thinkingLow`: Editor border with low thinking.
    ThinkingLow,
    /// `thinkingMedium`: Editor border with medium thinking.
    ThinkingMedium,
    /// `thinkingHigh`: Editor border with high thinking.
    ThinkingHigh,
    /// `thinkingXhigh`: Editor border with extra high thinking.
    ThinkingXhigh,
    /// `bashMode`: Editor border in bash mode (`!` prefix).
    BashMode,
}

impl Slot {
    /// Every token, in the order of pi's theme schema (and of [`crate::THEME_SLOTS`]).
    pub const ALL: [Slot; SLOT_COUNT] = [
        Slot::Accent,
        Slot::Border,
        Slot::BorderAccent,
        Slot::BorderMuted,
        Slot::Success,
        Slot::Error,
        Slot::Warning,
        Slot::Muted,
        Slot::Dim,
        Slot::Text,
        Slot::ThinkingText,
        Slot::SelectedBg,
        Slot::UserMessageBg,
        Slot::UserMessageText,
        Slot::CustomMessageBg,
        Slot::CustomMessageText,
        Slot::CustomMessageLabel,
        Slot::ToolPendingBg,
        Slot::ToolSuccessBg,
        Slot::ToolErrorBg,
        Slot::ToolTitle,
        Slot::ToolOutput,
        Slot::MdHeading,
        Slot::MdLink,
        Slot::MdLinkUrl,
        Slot::MdCode,
        Slot::MdCodeBlock,
        Slot::MdCodeBlockBorder,
        Slot::MdQuote,
        Slot::MdQuoteBorder,
        Slot::MdHr,
        Slot::MdListBullet,
        Slot::ToolDiffAdded,
        Slot::ToolDiffRemoved,
        Slot::ToolDiffContext,
        Slot::SyntaxComment,
        Slot::SyntaxKeyword,
        Slot::SyntaxFunction,
        Slot::SyntaxVariable,
        Slot::SyntaxString,
        Slot::SyntaxNumber,
        Slot::SyntaxType,
        Slot::SyntaxOperator,
        Slot::SyntaxPunctuation,
        Slot::ThinkingOff,
        Slot::ThinkingMinimal,
        Slot::ThinkingLow,
        Slot::ThinkingMedium,
        Slot::ThinkingHigh,
        Slot::ThinkingXhigh,
        Slot::BashMode,
    ];

    /// The token's name in pi's theme files (`toolTitle`, `mdHeading`, …).
    pub fn name(self) -> &'static str {
        crate::THEME_SLOTS[self as usize]
    }

    /// The token called `name`.
    pub fn from_name(name: &str) -> Option<Slot> {
        Slot::ALL.into_iter().find(|slot| slot.name() == name)
    }

    /// Whether pi uses the token as a background (`selectedBg`, `userMessageBg`,
    /// `customMessageBg` and the three tool-block backgrounds).
    pub fn is_background(self) -> bool {
        matches!(
            self,
            Slot::SelectedBg
                | Slot::UserMessageBg
                | Slot::CustomMessageBg
                | Slot::ToolPendingBg
                | Slot::ToolSuccessBg
                | Slot::ToolErrorBg
        )
    }
}
