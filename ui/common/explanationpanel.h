#pragma once

#include <QHash>
#include <QString>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QPushButton;
class QTextBrowser;
QT_END_NAMESPACE

namespace scalelab::ui {

/// The text beside a tab's charts: the idea, the key equation with today's numbers, a common
/// misconception and a check question whose answer stays hidden until asked for ("predict,
/// then reveal"). The text lives in resources/explanations/<tab>.html as rich text, editable
/// without touching code: `{{name}}` is replaced by the tab's live value of that name, and the
/// part between `<!--answer-->` and `<!--/answer-->` shows only after "Reveal answer".
class ExplanationPanel : public QWidget {
    Q_OBJECT

public:
    /// Loads ":/explanations/<tab>.html".
    explicit ExplanationPanel(const QString& tab, QWidget* parent = nullptr);

    /// The text with values substituted, as shown (answer included only when revealed).
    QString html() const;
    bool hasText() const { return !m_template.isEmpty(); }
    bool answerRevealed() const { return m_revealed; }

public slots:
    void setValues(const QHash<QString, QString>& values);
    void setAnswerRevealed(bool revealed);

private:
    void refresh();

    QString m_template;
    QHash<QString, QString> m_values;
    bool m_revealed = false;
    QTextBrowser* m_text;
    QPushButton* m_reveal;
};

/// `text` with every `{{name}}` replaced by values[name] (unknown names stay visible as
/// `{{name}}`, so a typo in a text file shows instead of vanishing), and the answer part kept or
/// cut.
QString fillExplanation(const QString& text, const QHash<QString, QString>& values,
                        bool withAnswer);

} // namespace scalelab::ui
