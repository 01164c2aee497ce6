#include "handoutcommand.h"

#include "chartexport.h"
#include "chartpanel.h"
#include "chartstyle.h"
#include "explanationpanel.h"
#include "lesson.h"
#include "scenariodocument.h"
#include "scenariojson.h"
#include "tab.h"
#include "tabs.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QTextDocument>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

namespace scalelab::app {

using namespace scalelab::document;

namespace {

/// The off-screen views of one document, the one a step is drawn from.
struct Views {
    ScenarioDocument document;
    std::vector<std::unique_ptr<ui::Tab>> tabs;

    ui::Tab* show(const LessonStep& step)
    {
        document.load(step.scenario);
        for (const auto& tab : tabs)
            if (tab->name() == step.tab) {
                tab->refreshNow();
                tab->waitForIdle();
                return tab.get();
            }
        return nullptr;
    }
};

QString questionHtml(const LessonPrediction& p, const QHash<QString, QString>& values)
{
    QString html = "<p><b>" + QCoreApplication::translate("Handout", "Predict:") + "</b> "
        + ui::fillExplanation(p.question, values, true) + "</p>";
    if (p.kind == LessonPrediction::Kind::Choice) {
        html += "<ol type=\"A\">";
        for (const QString& choice : p.choices)
            html += "<li>" + choice.toHtmlEscaped() + "</li>";
        html += "</ol>";
    } else if (!p.unit.isEmpty()) {
        html += "<p>"
            + QCoreApplication::translate("Handout", "Answer in %1: ______")
                  .arg(p.unitFor(0).toHtmlEscaped())
            + "</p>";
    }
    return html;
}

QString answerHtml(int index, const LessonPrediction& p, const QHash<QString, QString>& values)
{
    const QString answer = p.kind == LessonPrediction::Kind::Choice
        ? QString("%1. %2").arg(QChar('A' + p.answerIndex),
                                p.choices[p.answerIndex].toHtmlEscaped())
        : QString("%1 %2").arg(QString::number(p.answer, 'g', 12),
                               p.unitFor(p.answer).toHtmlEscaped());
    return "<p><b>"
        + QCoreApplication::translate("Handout", "Step %1: %2").arg(index + 1).arg(answer)
        + "</b></p>" + ui::fillExplanation(p.explanation, values, true);
}

/// Draws `html` at the top of `area` and returns the height it took.
qreal drawHtml(QPainter& painter, const QString& html, const QRectF& area)
{
    QTextDocument text;
    text.setDefaultFont(QFont(painter.font().family(), 11));
    text.setHtml(html);
    text.setTextWidth(area.width());
    painter.save();
    painter.translate(area.topLeft());
    text.drawContents(&painter, QRectF(0, 0, area.width(), area.height()));
    painter.restore();
    return text.size().height();
}

/// One page: the step's heading, narration, question and charts in a grid below.
void drawStepPage(QPainter& painter, const QRectF& page, const Lesson& lesson, int index,
                  ui::Tab& tab)
{
    const LessonStep& step = lesson.steps[std::size_t(index)];
    const QHash<QString, QString> values = tab.explanationValues();
    QString html = "<h2>" + QString("%1 / %2").arg(index + 1).arg(lesson.steps.size()) + " "
        + step.title.toHtmlEscaped() + "</h2>" + ui::fillExplanation(step.narration, values, true);
    if (step.prediction)
        html += questionHtml(*step.prediction, values);
    const qreal used = drawHtml(painter, html, page);
    const QList<ui::ChartPanel*> charts = tab.charts();
    const int columns = charts.size() > 1 ? 2 : 1;
    const int rows = (static_cast<int>(charts.size()) + columns - 1) / columns;
    const QRectF area(page.left(), page.top() + used + 8, page.width(), page.height() - used - 8);
    if (rows == 0 || area.height() < 60)
        return;
    const QSizeF cell(area.width() / columns, area.height() / rows);
    for (int i = 0; i < charts.size(); ++i) {
        painter.save();
        painter.translate(area.left() + (i % columns) * cell.width(),
                          area.top() + (i / columns) * cell.height());
        ui::paintChart(painter, *charts[i], (cell - QSizeF(8, 8)).toSize());
        painter.restore();
    }
}

/// Writes lesson.pdf; returns an error line, empty on success.
QString writeHandoutPdf(const QString& path, const Lesson& lesson, Views& views)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return "cannot write " + path + ": " + file.errorString();
    QPdfWriter pdf(&file);
    pdf.setPageSize(QPageSize(QPageSize::A4));
    pdf.setPageOrientation(QPageLayout::Landscape);
    pdf.setPageMargins(QMarginsF(12, 12, 12, 12), QPageLayout::Millimeter);
    pdf.setResolution(96);
    pdf.setTitle(lesson.title);
    QPainter painter(&pdf);
    const QRectF page(QPointF(0, 0), QSizeF(pdf.width(), pdf.height()));
    QString answers = "<h2>" + QCoreApplication::translate("Handout", "Answers") + "</h2>";
    for (int i = 0; i < static_cast<int>(lesson.steps.size()); ++i) {
        ui::Tab* tab = views.show(lesson.steps[std::size_t(i)]);
        if (i > 0)
            pdf.newPage();
        drawStepPage(painter, page, lesson, i, *tab);
        if (const auto& p = lesson.steps[std::size_t(i)].prediction)
            answers += answerHtml(i, *p, tab->explanationValues());
    }
    pdf.newPage();
    drawHtml(painter, answers, page);
    if (!painter.end() || !file.commit())
        return "cannot write " + path + ": " + file.errorString();
    return {};
}

} // namespace

int runLessonHandout(const CommandLine& cl)
{
    QJsonObject object;
    Lesson lesson;
    try {
        object = readLessonObject(cl.lessonFile);
        lesson = lessonFromJson(object);
    } catch (const core::InputError& e) {
        printError(describeInputError(cl.lessonFile, e, object));
        return ExitBadInput;
    }
    const auto format = ui::imageFormatFromName(cl.format.isEmpty() ? "png" : cl.format);
    ui::setChartBackground(ui::ChartBackground::White);
    Views views;
    for (ui::Tab* raw : ui::createTabs(&views.document, nullptr, ui::FirstDrawing::WhenShown))
        views.tabs.emplace_back(raw);
    std::error_code made;
    std::filesystem::create_directories(std::filesystem::path(cl.outDir.toStdString()), made);
    if (made || !QFileInfo(cl.outDir).isDir()) {
        printError("cannot create the folder " + cl.outDir);
        return ExitFailure;
    }
    const QDir out(cl.outDir);
    QStringList written;
    for (int i = 0; i < static_cast<int>(lesson.steps.size()); ++i) {
        ui::Tab* tab = views.show(lesson.steps[std::size_t(i)]);
        if (tab->failure() != ui::Tab::Failure::None) {
            printError(cl.lessonFile + QString(": steps[%1]: ").arg(i) + tab->failureMessage());
            return tab->failure() == ui::Tab::Failure::BadInput ? ExitBadInput : ExitFailure;
        }
        QList<ui::ExportJob> jobs;
        for (ui::ChartPanel* chart : tab->charts())
            jobs.append({chart,
                         out.filePath(QString("step-%1-%2.%3")
                                          .arg(i + 1, 2, 10, QChar('0'))
                                          .arg(chart->name(), ui::imageFormatName(*format))),
                         *format, cl.size});
        // Each step's charts now, before the document moves on to the next step.
        if (const QString error = ui::exportCharts(jobs); !error.isEmpty()) {
            printError(error);
            return ExitFailure;
        }
        for (const ui::ExportJob& job : jobs)
            written << job.path;
    }
    if (const QString error = writeHandoutPdf(out.filePath("lesson.pdf"), lesson, views);
        !error.isEmpty()) {
        printError(error);
        return ExitFailure;
    }
    written << out.filePath("lesson.pdf");
    for (const QString& path : written)
        std::printf("%s\n", qPrintable(QDir::toNativeSeparators(path)));
    return std::fflush(stdout) == 0 ? ExitOk : ExitFailure;
}

} // namespace scalelab::app
