#include "explanationpanel.h"

#include <QFile>
#include <QPushButton>
#include <QScrollBar>
#include <QSet>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextTable>
#include <QVBoxLayout>
#include <utility>

namespace scalelab::ui {

namespace {

/// A character of a placeholder's name: an ASCII letter or digit, '_' or '.'.
bool isNameCharacter(QChar c)
{
    const char16_t u = c.unicode();
    return (u >= u'a' && u <= u'z') || (u >= u'A' && u <= u'Z') || (u >= u'0' && u <= u'9')
        || u == u'_' || u == u'.';
}

/// Calls visit(start, end, name) for each `{{name}}` of `text`, in order, where [start, end) is
/// the whole placeholder. Braces around anything else stay text. Scanned by hand: a regular
/// expression is compiled, and compiled to machine code, the first time it is used, about a
/// tenth of a millisecond each, on the way to the first window.
template <typename Visit> void forEachPlaceholder(const QString& text, Visit visit)
{
    const QLatin1StringView open("{{"), close("}}");
    qsizetype from = 0;
    for (qsizetype start; (start = text.indexOf(open, from)) >= 0;) {
        qsizetype end = start + open.size();
        while (end < text.size() && isNameCharacter(text.at(end)))
            ++end;
        const qsizetype length = end - start - open.size();
        if (length > 0 && QStringView(text).sliced(end).startsWith(close)) {
            visit(start, end + close.size(), text.sliced(start + open.size(), length));
            from = end + close.size();
        } else {
            from = start + 1;
        }
    }
}

/// `text` without its answers: each `<!--answer-->` up to the first `<!--/answer-->` after it.
QString withoutAnswers(QString text)
{
    const QLatin1StringView open("<!--answer-->"), close("<!--/answer-->");
    for (qsizetype start; (start = text.indexOf(open)) >= 0;) {
        const qsizetype stop = text.indexOf(close, start + open.size());
        if (stop < 0)
            break;
        text.remove(start, stop + close.size() - start);
    }
    return text;
}

} // namespace

QString fillExplanation(const QString& text, const QHash<QString, QString>& values, bool withAnswer)
{
    // Not greedy: a text may ask more than one question, each with its own answer.
    const QString out = withAnswer ? text : withoutAnswers(text);
    QString filled;
    qsizetype last = 0;
    forEachPlaceholder(out, [&](qsizetype start, qsizetype end, const QString& name) {
        filled += QStringView(out).sliced(last, start - last);
        const auto value = values.constFind(name);
        filled += value != values.constEnd() ? value.value() : out.sliced(start, end - start);
        last = end;
    });
    filled += QStringView(out).sliced(last);
    return filled;
}

QString explanationFile(const QString& folder, const QString& tab, const QLocale& locale)
{
    for (const QString& language : locale.uiLanguages()) {
        QString name = language;
        name.replace('-', '_'); // "pt-BR" as file names write it: pt_BR
        for (;;) {
            const QString path = folder + '/' + tab + '.' + name + ".html";
            if (QFile::exists(path))
                return path;
            const qsizetype cut = name.lastIndexOf('_');
            if (cut <= 0)
                break;
            name.truncate(cut); // pt_BR, then pt
        }
    }
    return folder + '/' + tab + ".html";
}

ExplanationPanel::ExplanationPanel(const QString& tab, QWidget* parent)
    : QWidget(parent)
    , m_text(new QTextBrowser(this))
    , m_reveal(new QPushButton(tr("&Reveal answer"), this))
{
    setObjectName(tab + ".explanation");
    QFile file(explanationFile(":/explanations", tab));
    if (file.open(QIODevice::ReadOnly))
        m_template = QString::fromUtf8(file.readAll());
    m_text->setObjectName(tab + ".explanation.text");
    m_text->setOpenExternalLinks(true);
    m_text->document()->setUndoRedoEnabled(false); // values set in place are no edits to undo
    m_text->setAccessibleName(tr("Explanation"));
    m_text->setAccessibleDescription(
        tr("The idea of this tab, its key equation with the current values, a common "
           "misconception and a question to check yourself."));
    m_reveal->setObjectName(tab + ".explanation.reveal");
    m_reveal->setCheckable(true);
    m_reveal->setAccessibleDescription(tr("Shows or hides the answer to the check question."));
    m_reveal->setVisible(m_template.contains("<!--answer-->"));
    connect(m_reveal, &QPushButton::toggled, this, &ExplanationPanel::setAnswerRevealed);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_reveal);
    refresh();
}

void ExplanationPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    // The text opens at its top. On its first show a text browser scrolls its cursor into
    // view, and the cursor (at the start, unused: the text is read-only) is measured against
    // a viewport not yet laid out, a few pixels high: the heading was scrolled half away.
    // The text is shown before this panel's own show event, so this comes after.
    if (!m_shownOnce) {
        m_shownOnce = true;
        if (m_text->verticalScrollBar())
            m_text->verticalScrollBar()->setValue(0);
    }
}

QString ExplanationPanel::html() const
{
    return fillExplanation(m_template, m_values, m_revealed);
}

void ExplanationPanel::setValues(const QHash<QString, QString>& values)
{
    if (values == m_values)
        return;
    const QHash<QString, QString> before = std::exchange(m_values, values);
    if (!setChangedValuesInPlace(before))
        refresh();
}

namespace {

/// The names of the placeholders in `text`, each once.
QSet<QString> placeholderNames(const QString& text)
{
    QSet<QString> names;
    forEachPlaceholder(text,
                       [&names](qsizetype, qsizetype, const QString& name) { names.insert(name); });
    return names;
}

/// What the text shows for `key`: its value, or the placeholder itself where it has none.
QString shownValue(const QHash<QString, QString>& values, const QString& key)
{
    return values.value(key, "{{" + key + "}}");
}

/// The anchor name a value is shown under, so that it can be found again in the text.
QString valueAnchor(const QString& key)
{
    return QStringLiteral("scalelab-value:") + key;
}

/// Whether `document` holds `text` from `position` on. Read a character at a time: a cursor
/// moved there outside an edit block works out its place on the line, shaping the line's text
/// (a third of an update's time, 0.8 M instructions on the pipeline tab).
bool holdsAt(const QTextDocument& document, int position, const QString& text)
{
    for (qsizetype i = 0; i < text.size(); ++i)
        if (document.characterAt(position + static_cast<int>(i)) != text.at(i))
            return false;
    return true;
}

/// A value that is plain text, as the text shows it: set in place as it is.
bool isPlain(const QString& value)
{
    return !value.isEmpty() && !value.contains('<') && !value.contains('&');
}

} // namespace

bool ExplanationPanel::setChangedValuesInPlace(const QHash<QString, QString>& before)
{
    // A name with no value shows as its placeholder: a value that comes or goes is a change
    // like another.
    const QString shown = fillExplanation(m_template, {}, m_revealed); // the placeholders
    QHash<QString, int> changed; // key: how often the shown text has it
    for (const QString& key : placeholderNames(shown))
        if (shownValue(before, key) != shownValue(m_values, key)) {
            if (!isPlain(shownValue(m_values, key)) || !isPlain(shownValue(before, key)))
                return false;
            changed.insert(key, static_cast<int>(shown.count("{{" + key + "}}")));
        }
    // Where each changed value sits. Qt puts an anchor's name on its first character only: the
    // value runs from there for as many characters as the value shown (plain text shows as it
    // is; where the text there is not that value, the whole text is built again).
    struct Run {
        int position, length;
        QString key;
        QTextCharFormat format;
    };
    QList<Run> runs;
    QTextDocument* document = m_text->document();
    QTextCursor cursor(document);
    for (QTextBlock block = document->begin(); block.isValid(); block = block.next())
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextFragment fragment = it.fragment();
            const QTextCharFormat format = fragment.charFormat();
            for (const QString& name : format.anchorNames()) {
                const QString key = name.mid(valueAnchor({}).size());
                if (!name.startsWith(valueAnchor({})) || !changed.contains(key))
                    continue;
                const QString old = shownValue(before, key);
                const auto length = static_cast<int>(old.size());
                if (!holdsAt(*document, fragment.position(), old))
                    return false;
                runs.append({fragment.position(), length, key, format});
                --changed[key];
            }
        }
    for (const int missing : std::as_const(changed))
        if (missing != 0)
            return false;
    // From the end, so the positions of the runs before stay true. Each run an edit of its
    // own: the layout then redoes the paragraph the run is in, where one edit of them all redid
    // every paragraph from the first run to the last (the pipeline tab's update took 1.8 M
    // instructions, 0.4 M so). Except in a table, which Qt lays out whole for an edit in any
    // cell: the runs of one table are one edit (an edit a run made the plan tab's updates up to
    // 5 ms). Inside an edit, moving the cursor does not work out its place on the line.
    const QTextTable* editing = nullptr; // the table of the open edit, if any
    cursor.beginEditBlock();
    for (auto run = runs.crbegin(); run != runs.crend(); ++run) {
        const auto* table = qobject_cast<const QTextTable*>(document->frameAt(run->position));
        if (run != runs.crbegin() && (!table || table != editing)) {
            cursor.endEditBlock();
            cursor.beginEditBlock();
        }
        editing = table;
        cursor.setPosition(run->position);
        cursor.setPosition(run->position + run->length, QTextCursor::KeepAnchor);
        cursor.insertText(shownValue(m_values, run->key), run->format);
    }
    cursor.endEditBlock();
    return true;
}

void ExplanationPanel::setAnswerRevealed(bool revealed)
{
    m_revealed = revealed;
    if (m_reveal->isChecked() != revealed)
        m_reveal->setChecked(revealed);
    m_reveal->setText(revealed ? tr("Hide &answer") : tr("&Reveal answer"));
    refresh();
}

void ExplanationPanel::refresh()
{
    // Keep the reader's place: a slider step must not scroll the text back to the top.
    const int scroll = m_text->verticalScrollBar() ? m_text->verticalScrollBar()->value() : 0;
    // Each value (or placeholder without one) under an anchor of its own, where
    // setChangedValuesInPlace finds it again.
    QHash<QString, QString> anchored;
    for (const QString& key : placeholderNames(m_template))
        anchored.insert(
            key, QString("<a name=\"%1\">%2</a>").arg(valueAnchor(key), shownValue(m_values, key)));
    m_text->setHtml(fillExplanation(m_template, anchored, m_revealed));
    if (m_text->verticalScrollBar())
        m_text->verticalScrollBar()->setValue(scroll);
}

} // namespace scalelab::ui
