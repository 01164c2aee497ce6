#pragma once

#include <QHash>
#include <QLocale>
#include <QString>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QPushButton;
class QTextBrowser;
class QTimer;
QT_END_NAMESPACE

namespace scalelab::ui {

/// The text beside a tab's charts: the idea, the key equation with today's numbers, a common
/// misconception and a check question whose answer stays hidden until asked for ("predict,
/// then reveal"). The text lives in resources/explanations/<tab>.html as rich text, editable
/// without touching code: `{{name}}` is replaced by the tab's live value of that name, and the
/// part between `<!--answer-->` and `<!--/answer-->` shows only after "Reveal answer".
/// A translation sits beside the English text as <tab>.<lang>.html (explanationFile()).
class ExplanationPanel : public QWidget {
    Q_OBJECT

public:
    /// Loads explanationFile(":/explanations", tab): the user's language, else English.
    explicit ExplanationPanel(const QString& tab, QWidget* parent = nullptr);

    /// The text with values substituted, as shown (answer included only when revealed).
    QString html() const;
    bool hasText() const { return !m_template.isEmpty(); }
    bool answerRevealed() const { return m_revealed; }
    /// Whether values set are still on their way into the text shown: they go in a paragraph
    /// or a table at a time, a few each frame (applyValues()).
    bool updatePending() const;
    /// Puts every value still on its way into the text now.
    void finishUpdate();
    /// The text work one pass takes at most, in nanoseconds: kSliceNs unless set (a test sets
    /// 0, one paragraph or table a pass).
    void setSliceBudget(qint64 ns) { m_sliceNs = ns; }

public slots:
    void setValues(const QHash<QString, QString>& values);
    void setAnswerRevealed(bool revealed);

protected:
    void showEvent(QShowEvent* event) override;

private:
    /// Builds the whole text again: for new text, the answer shown or hidden, or new values
    /// that cannot be set in place.
    void refresh();
    /// Sets the values that differ from what the text shows into it, each where its
    /// placeholder is, without building the text again (a slider step changes a few numbers;
    /// laying out the whole text anew cost a millisecond or two). One paragraph or one table
    /// at a time, until `budgetNs` nanoseconds have passed (at least one; all of them if
    /// negative); the rest a frame later, from where this pass stopped, with the values newest
    /// then. Builds the whole text again where a value cannot be set in place: a value with
    /// markup, or a placeholder not found as often as the text has it.
    void applyValues(qint64 budgetNs);

    /// The text work one frame takes at most, and the time between two such passes. A slider
    /// step of the plan tab changes some thirty values in a dozen paragraphs and tables, a
    /// tenth to half a millisecond each: in one pass they held up the charts' next frame by 3
    /// to 6 ms.
    static constexpr qint64 kSliceNs = 1'000'000;
    static constexpr int kFrameMs = 16;

    QString m_template;
    QHash<QString, QString> m_values; ///< the values to show
    /// What the text shows for each placeholder, one string per place it has, in text order.
    QHash<QString, QStringList> m_shown;
    /// Where the next pass of applyValues() starts: every paragraph gets its turn, even while
    /// a slider drag keeps changing the values.
    int m_resumeAt = 0;
    qint64 m_sliceNs = kSliceNs;
    bool m_revealed = false;
    bool m_shownOnce = false;
    QTextBrowser* m_text;
    QPushButton* m_reveal;
    QTimer* m_slices; ///< the next pass of applyValues()
};

/// `text` with every `{{name}}` replaced by values[name] (unknown names stay visible as
/// `{{name}}`, so a typo in a text file shows instead of vanishing), and the answer part kept or
/// cut.
QString fillExplanation(const QString& text, const QHash<QString, QString>& values,
                        bool withAnswer);

/// The explanation file of `tab` in `folder` for `locale`: `<tab>.<lang>.html` for the first of
/// the locale's languages that has one, most specific first (`memory.pt_BR.html`, then
/// `memory.pt.html`), else the English `<tab>.html`. So a translator adds `memory.de.html` to
/// resources/explanations/ and nothing else (docs/TRANSLATING.md).
QString explanationFile(const QString& folder, const QString& tab,
                        const QLocale& locale = QLocale());

} // namespace scalelab::ui
