#include "explanationpanel.h"

#include <QFile>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollBar>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace scalelab::ui {

QString fillExplanation(const QString& text, const QHash<QString, QString>& values, bool withAnswer)
{
    QString out = text;
    // Not greedy: a text may ask more than one question, each with its own answer.
    static const QRegularExpression answer("<!--answer-->(.*?)<!--/answer-->",
                                           QRegularExpression::DotMatchesEverythingOption);
    if (!withAnswer)
        out.replace(answer, "");
    static const QRegularExpression placeholder("\\{\\{([A-Za-z0-9_.]+)\\}\\}");
    QString filled;
    qsizetype last = 0;
    for (auto it = placeholder.globalMatch(out); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        filled += out.mid(last, m.capturedStart() - last);
        const auto value = values.constFind(m.captured(1));
        filled += value != values.constEnd() ? value.value() : m.captured(0);
        last = m.capturedEnd();
    }
    filled += out.mid(last);
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

QString ExplanationPanel::html() const
{
    return fillExplanation(m_template, m_values, m_revealed);
}

void ExplanationPanel::setValues(const QHash<QString, QString>& values)
{
    if (values == m_values)
        return;
    m_values = values;
    refresh();
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
    m_text->setHtml(html());
    if (m_text->verticalScrollBar())
        m_text->verticalScrollBar()->setValue(scroll);
}

} // namespace scalelab::ui
