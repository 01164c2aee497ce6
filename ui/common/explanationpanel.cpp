#include "explanationpanel.h"

#include <QElapsedTimer>
#include <QFile>
#include <QPushButton>
#include <QScrollBar>
#include <QSet>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextTable>
#include <QTimer>
#include <QVBoxLayout>
#include <optional>
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
    , m_slices(new QTimer(this))
{
    m_slices->setSingleShot(true);
    m_slices->setInterval(kFrameMs);
    connect(m_slices, &QTimer::timeout, this, [this] { applyValues(m_sliceNs); });
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
    m_values = values;
    // A pass still to come sets the newest values: a slider step costs the text no more.
    if (!m_slices->isActive())
        applyValues(m_sliceNs);
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

/// Where a value that changed sits in the text, and what it becomes.
struct ValueRun {
    int position, length;
    QString key;
    qsizetype place; ///< which of the key's places in the text, in text order
    QTextCharFormat format;
    qintptr edit; ///< runs with the same are set in one edit: a paragraph, or a table
};

/// The places of `document` where the value shown (`shown`, per key and place) differs from
/// `values`, in text order; none where one of them cannot be set in place (a value with
/// markup, or a placeholder not found as often as the text has it). Qt puts an anchor's name
/// on its first character only: the value runs from there for as many characters as the value
/// shown (plain text shows as it is; where the text there is not that value, it cannot be set
/// in place). A name with no value shows as its placeholder: a value that comes or goes is a
/// change like another.
std::optional<QList<ValueRun>> changedRuns(const QTextDocument& document,
                                           const QHash<QString, QStringList>& shown,
                                           const QHash<QString, QString>& values)
{
    QList<ValueRun> runs;
    QHash<QString, qsizetype> places; // key: its places seen so far
    for (QTextBlock block = document.begin(); block.isValid(); block = block.next())
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextFragment fragment = it.fragment();
            const QTextCharFormat format = fragment.charFormat();
            for (const QString& name : format.anchorNames()) {
                if (!name.startsWith(valueAnchor({})))
                    continue;
                const QString key = name.mid(valueAnchor({}).size());
                const qsizetype place = places[key]++;
                const auto was = shown.constFind(key);
                if (was == shown.constEnd() || place >= was->size())
                    return std::nullopt;
                const QString& old = was->at(place);
                const QString now = shownValue(values, key);
                if (old == now)
                    continue;
                if (!isPlain(old) || !isPlain(now) || !holdsAt(document, fragment.position(), old))
                    return std::nullopt;
                // Qt lays out a whole table again for an edit in any of its cells: the runs of
                // one table are one edit (an edit a run made the plan tab's updates up to 5 ms).
                const auto* table =
                    qobject_cast<const QTextTable*>(document.frameAt(fragment.position()));
                runs.append({fragment.position(), static_cast<int>(old.size()), key, place, format,
                             table ? reinterpret_cast<qintptr>(table) : -1 - block.blockNumber()});
            }
        }
    for (auto was = shown.cbegin(); was != shown.cend(); ++was)
        if (places.value(was.key()) != was->size())
            return std::nullopt;
    return runs;
}

} // namespace

bool ExplanationPanel::updatePending() const
{
    return m_slices->isActive();
}

void ExplanationPanel::finishUpdate()
{
    if (m_slices->isActive())
        applyValues(-1);
}

void ExplanationPanel::applyValues(qint64 budgetNs)
{
    QElapsedTimer clock;
    clock.start();
    m_slices->stop();
    std::optional<QList<ValueRun>> changed = changedRuns(*m_text->document(), m_shown, m_values);
    if (!changed)
        return refresh();
    QList<ValueRun> runs = std::move(*changed);
    if (runs.isEmpty())
        return;
    // The edits in text order from the first at or after where the last pass stopped, round to
    // the start. Each edit sets its runs from the last, so the positions of those before stay
    // true, and moves the runs after it by what it added. An edit of its own for each
    // paragraph (and table): the layout then redoes that paragraph, where one edit of them all
    // redid every paragraph from the first run to the last (the pipeline tab's update took
    // 1.8 M instructions, 0.4 M so).
    qsizetype first = 0;
    while (first < runs.size() && runs[first].position < m_resumeAt)
        ++first;
    if (first == runs.size())
        first = 0;
    while (first > 0 && runs[first - 1].edit == runs[first].edit)
        --first; // a table's runs stay one edit
    QTextCursor cursor(m_text->document());
    qsizetype done = 0; // runs set so far
    for (qsizetype begin = first; done < runs.size();) {
        qsizetype end = begin + 1;
        while (end < runs.size() && runs[end].edit == runs[begin].edit)
            ++end;
        int added = 0;
        // Inside an edit, moving the cursor does not work out its place on the line.
        cursor.beginEditBlock();
        for (qsizetype r = end; r-- > begin;) {
            const ValueRun& run = runs[r];
            const QString now = shownValue(m_values, run.key);
            cursor.setPosition(run.position);
            cursor.setPosition(run.position + run.length, QTextCursor::KeepAnchor);
            cursor.insertText(now, run.format);
            m_shown[run.key][run.place] = now;
            added += static_cast<int>(now.size()) - run.length;
        }
        cursor.endEditBlock();
        for (qsizetype r = end; r < runs.size(); ++r)
            runs[r].position += added;
        m_resumeAt = runs[end - 1].position + static_cast<int>(runs[end - 1].length) + added;
        done += end - begin;
        begin = end == runs.size() ? 0 : end;
        if (done < runs.size() && budgetNs >= 0 && clock.nsecsElapsed() >= budgetNs) {
            m_slices->start();
            return;
        }
    }
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
    // Each value (or placeholder without one) under an anchor of its own, where applyValues()
    // finds it again.
    QHash<QString, QString> anchored;
    for (const QString& key : placeholderNames(m_template))
        anchored.insert(
            key, QString("<a name=\"%1\">%2</a>").arg(valueAnchor(key), shownValue(m_values, key)));
    m_text->setHtml(fillExplanation(m_template, anchored, m_revealed));
    m_slices->stop();
    m_resumeAt = 0;
    m_shown.clear();
    const QString shown = fillExplanation(m_template, {}, m_revealed); // the placeholders
    for (const QString& key : placeholderNames(shown))
        m_shown.insert(key, QStringList(shown.count("{{" + key + "}}"), shownValue(m_values, key)));
    if (m_text->verticalScrollBar())
        m_text->verticalScrollBar()->setValue(scroll);
}

} // namespace scalelab::ui
