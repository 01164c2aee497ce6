#include "exercises.h"

#include "scenariojson.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <cmath>

namespace scalelab::app {

using namespace scalelab::document;

QList<Exercise> loadExercises()
{
    QFile file(":/exercises/exercises.json");
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QList<Exercise> out;
    for (const QJsonValue& v : QJsonDocument::fromJson(file.readAll()).array()) {
        const QJsonObject o = v.toObject();
        Exercise e;
        e.id = o.value("id").toString();
        e.title = o.value("title").toString();
        e.tab = o.value("tab").toString();
        e.text = o.value("text").toString();
        e.setup = o.value("setup").toObject();
        for (const QJsonValue& q : o.value("questions").toArray()) {
            const QJsonObject qo = q.toObject();
            ExerciseQuestion question;
            question.prompt = qo.value("prompt").toString();
            question.report = qo.value("report").toString();
            question.kind = qo.value("kind").toString("number");
            question.tolerance = qo.value("tolerance").toDouble(1e-3);
            question.hint = qo.value("hint").toString();
            question.solution = qo.value("solution").toString();
            e.questions << question;
        }
        out << e;
    }
    return out;
}

core::Scenario exerciseScenario(const Exercise& exercise)
{
    return scenarioFromJson(exercise.setup);
}

QJsonValue reportValue(const QJsonObject& report, const QString& path)
{
    QJsonValue current = report;
    static const QRegularExpression part("([A-Za-z0-9_]+)|\\[(\\d+)\\]");
    for (auto it = part.globalMatch(path); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        if (!m.captured(1).isEmpty())
            current = current.toObject().value(m.captured(1));
        else
            current = current.toArray().at(m.captured(2).toInt());
    }
    return current;
}

std::optional<double> parseAmount(const QString& raw, const QString& kind)
{
    QString text = raw.trimmed();
    text.remove(',');
    text.remove(QChar(0x202F)); // narrow no-break space used as a thousands separator
    // A fraction written as a ratio: 3/15.
    static const QRegularExpression ratio("^\\s*([0-9.eE+-]+)\\s*/\\s*([0-9.eE+-]+)\\s*$");
    if (const auto m = ratio.match(text); m.hasMatch()) {
        bool a = false, b = false;
        const double num = m.captured(1).toDouble(&a), den = m.captured(2).toDouble(&b);
        if (a && b && den != 0)
            return num / den;
        return std::nullopt;
    }
    static const QRegularExpression amount("^([-+]?[0-9]*\\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\\s*"
                                           "(%|[kKMGT]i?B|[kKMGT]|B|bytes?|)$");
    const auto m = amount.match(text);
    if (!m.hasMatch())
        return std::nullopt;
    double value = m.captured(1).toDouble();
    const QString unit = m.captured(2);
    if (unit == "%")
        return value / 100.0;
    if (unit.isEmpty() || unit == "B" || unit.startsWith("byte"))
        return value;
    const QString prefix = unit.left(1).toUpper();
    const bool binary = unit.contains('i');
    const int power = QString("KMGT").indexOf(prefix) + 1;
    if (kind != "bytes" && unit.endsWith('B'))
        return std::nullopt; // a byte unit on an answer that is not in bytes
    value *= std::pow(binary ? 1024.0 : 1000.0, power);
    return value;
}

namespace {

bool close(double answer, double truth, double tolerance)
{
    return std::abs(answer - truth) <= tolerance * std::max(std::abs(truth), 1e-300);
}

std::optional<QList<QList<double>>> parseMatrix(const QString& text)
{
    // [[2,1],[0,3]] as JSON, or rows separated by ';' with numbers by spaces or commas.
    const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8());
    QList<QList<double>> rows;
    if (doc.isArray()) {
        for (const QJsonValue& row : doc.array()) {
            if (!row.isArray())
                return std::nullopt;
            QList<double> values;
            for (const QJsonValue& v : row.toArray()) {
                if (!v.isDouble())
                    return std::nullopt;
                values << v.toDouble();
            }
            rows << values;
        }
        return rows;
    }
    for (const QString& line : text.split(';', Qt::SkipEmptyParts)) {
        QList<double> values;
        for (const QString& cell : line.split(QRegularExpression("[\\s,]+"), Qt::SkipEmptyParts)) {
            bool ok = false;
            values << cell.toDouble(&ok);
            if (!ok)
                return std::nullopt;
        }
        rows << values;
    }
    if (rows.isEmpty())
        return std::nullopt;
    return rows;
}

} // namespace

AnswerCheck checkAnswer(const ExerciseQuestion& question, const QString& answer,
                        const QJsonObject& report)
{
    AnswerCheck check;
    const QJsonValue truth = reportValue(report, question.report);
    if (question.report.isEmpty() || truth.isUndefined()) {
        check.message = QObject::tr("This one is answered in words: compare with the solution.");
        return check;
    }
    if (question.kind == "matrix") {
        const auto rows = parseMatrix(answer);
        if (!rows) {
            check.message = QObject::tr("Write the matrix as [[a, b], [c, d]] or as rows "
                                        "separated by ';'.");
            return check;
        }
        check.understood = true;
        const QJsonArray expected = truth.toArray();
        bool same = rows->size() == expected.size();
        for (qsizetype r = 0; same && r < expected.size(); ++r) {
            const QJsonArray row = expected.at(r).toArray();
            same = (*rows)[r].size() == row.size();
            for (qsizetype c = 0; same && c < row.size(); ++c)
                same = close((*rows)[r][c], row.at(c).toDouble(), question.tolerance);
        }
        check.correct = same;
    } else {
        const auto value = parseAmount(answer, question.kind);
        if (!value) {
            check.message = question.kind == "bytes"
                ? QObject::tr("Write a number, with a unit if you like: 16000000, 1.6e7, 16 MB.")
                : QObject::tr("Write a number: 0.2, 20%, 1/5 or 1.5e3.");
            return check;
        }
        check.understood = true;
        check.correct = close(*value, truth.toDouble(), question.tolerance);
    }
    check.message =
        check.correct ? QObject::tr("Right.") : QObject::tr("Not yet. %1").arg(question.hint);
    return check;
}

} // namespace scalelab::app
