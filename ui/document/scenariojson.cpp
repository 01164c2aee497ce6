#include "scenariojson.h"

#include "fields.h"

#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QSet>
#include <QStringList>
#include <QVariant>
#include <cmath>
#include <limits>
#include <map>

using scalelab::core::InputError;

namespace scalelab::document {

namespace {

constexpr double kMaxWhole = 9007199254740992.0; // 2^53: every whole number below is exact

std::string path(const QString& section, const QString& key)
{
    return (section + '.' + key).toStdString();
}

std::int64_t wholeNumber(const QJsonValue& value, const std::string& field)
{
    const QString expected = "a whole number in 0..2^53";
    if (!value.isDouble())
        throw InputError(field, expected.toStdString());
    // Qt keeps integer literals as 64-bit integers; anything else arrives as a double.
    const QVariant variant = value.toVariant();
    if (variant.typeId() == QMetaType::LongLong) {
        const qint64 v = variant.toLongLong();
        if (v < 0 || v > (qint64(1) << 53))
            throw InputError(field, expected.toStdString());
        return v;
    }
    const double d = value.toDouble();
    if (!std::isfinite(d) || d != std::floor(d) || d < 0.0 || d > kMaxWhole)
        throw InputError(field, expected.toStdString());
    return static_cast<std::int64_t>(d);
}

double finiteNumber(const QJsonValue& value, const std::string& field)
{
    if (!value.isDouble() || !std::isfinite(value.toDouble()))
        throw InputError(field, "a finite number");
    return value.toDouble();
}

/// One section of the scenario: hands out its keys by type and refuses keys it does not know.
class SectionReader {
public:
    SectionReader(const QJsonObject& root, const QString& name, QStringList known,
                  const QString& prefix = {})
        : m_name(prefix + name)
    {
        const QJsonValue v = root.value(name);
        if (v.isUndefined())
            return;
        if (!v.isObject())
            throw InputError(m_name.toStdString(),
                             "an object of " + m_name.toStdString() + " keys");
        m_object = v.toObject();
        for (const QString& key : m_object.keys())
            if (!known.contains(key))
                throw InputError(path(m_name, key),
                                 "one of the keys " + m_name.toStdString() + " knows ("
                                     + known.join(", ").toStdString() + ")");
    }

    bool has(const QString& key) const { return m_object.contains(key); }
    QJsonValue value(const QString& key) const { return m_object.value(key); }
    std::string field(const QString& key) const { return path(m_name, key); }

    /// The object under `key` as its own section (e.g. plan.model).
    SectionReader child(const QString& key, QStringList known) const
    {
        return SectionReader(m_object, key, std::move(known), m_name + '.');
    }

private:
    QString m_name;
    QJsonObject m_object;
};

std::vector<std::int64_t> wholeArray(const QJsonValue& value, const std::string& field,
                                     const std::string& expected)
{
    if (!value.isArray())
        throw InputError(field, expected);
    std::vector<std::int64_t> out;
    const QJsonArray array = value.toArray();
    for (qsizetype i = 0; i < array.size(); ++i)
        out.push_back(wholeNumber(array.at(i), field + '[' + std::to_string(i) + ']'));
    return out;
}

/// The value of `field` in `object` (the key's own object), checked against the field's kind.
double readFieldValue(const Field& field, const QJsonValue& value)
{
    const std::string path = field.key.toStdString();
    switch (field.kind) {
    case FieldKind::Whole:
        return static_cast<double>(wholeNumber(value, path));
    case FieldKind::Number:
        return finiteNumber(value, path);
    case FieldKind::Flag:
        if (!value.isBool())
            throw InputError(path, "true or false");
        return value.toBool() ? 1.0 : 0.0;
    case FieldKind::Choice: {
        QStringList quoted;
        for (const char* name : field.choices)
            quoted << '"' + QString::fromLatin1(name) + '"';
        quoted.sort();
        const std::string expected = "one of " + quoted.join(", ").toStdString();
        if (!value.isString())
            throw InputError(path, expected);
        for (std::size_t i = 0; i < field.choices.size(); ++i)
            if (value.toString() == QLatin1StringView(field.choices[i]))
                return static_cast<double>(i);
        throw InputError(path, expected);
    }
    }
    return 0;
}

/// A value as the scenario file writes it.
QJsonValue writeFieldValue(const Field& field, double value)
{
    switch (field.kind) {
    case FieldKind::Whole:
        return QJsonValue(static_cast<qint64>(std::llround(value)));
    case FieldKind::Number:
        return value;
    case FieldKind::Flag:
        return value != 0.0;
    case FieldKind::Choice:
        return QString::fromLatin1(field.choices.at(static_cast<std::size_t>(value)));
    }
    return {};
}

/// Keys a section object holds besides its fields' (lists and matrices, read by hand below).
QStringList extraKeys(const QString& object)
{
    if (object == "experts")
        return {"assignments", "expert_to_rank"};
    if (object == "fp8")
        return {"values"};
    return {};
}

/// Every key the JSON object at `object` ("memory", "plan.model") may hold, in table order:
/// its fields' keys, the objects nested in it, then its lists.
QStringList listKnownKeys(core::Section section, const QString& object)
{
    QStringList keys;
    for (const Field* f : sectionFields(section)) {
        if (!f->saved)
            continue;
        const QString parent = f->jsonObject();
        if (parent == object)
            keys << f->jsonKey();
        else if (parent.startsWith(object + '.')) {
            const QString child = parent.mid(object.size() + 1).section('.', 0, 0);
            if (!keys.contains(child))
                keys << child;
        }
    }
    return keys + extraKeys(object);
}

/// listKnownKeys for each object that holds fields, worked out once (the table is fixed):
/// reading the plan presets and published figures asked for them some 6,400 times, each
/// going through the whole table (0.8 G instructions when the plan tab was first opened).
QStringList knownKeys(core::Section section, const QString& object)
{
    static const auto known = [] {
        QHash<QString, QStringList> all;
        for (const Field& f : fields()) {
            const QString tag = QString::number(static_cast<int>(f.section)) + ':';
            QString path;
            for (const QString& part : f.jsonObject().split('.')) {
                path += (path.isEmpty() ? "" : ".") + part;
                if (!all.contains(tag + path))
                    all.insert(tag + path, listKnownKeys(f.section, path));
            }
        }
        return all;
    }();
    const auto it = known.constFind(QString::number(static_cast<int>(section)) + ':' + object);
    return it != known.cend() ? *it : listKnownKeys(section, object);
}

/// The reader of one JSON object of a section; refuses keys the table does not know.
SectionReader objectReader(const QJsonObject& root, core::Section section, const QString& object)
{
    const QStringList parts = object.split('.');
    SectionReader reader(root, parts.first(), knownKeys(section, parts.first()));
    QString path = parts.first();
    for (qsizetype i = 1; i < parts.size(); ++i) {
        path += '.' + parts[i];
        reader = reader.child(parts[i], knownKeys(section, path));
    }
    return reader;
}

/// Lays the keys of one section of `root` over `s`, field by field from the table.
void readSection(const QJsonObject& root, core::Section section, core::Scenario& s)
{
    const QString name =
        QString::fromLatin1(core::sectionName(section).data(),
                            static_cast<qsizetype>(core::sectionName(section).size()));
    // One reader an object, not one a field. The section's own reader comes first: it refuses
    // unknown keys even in a section with no fields.
    QHash<QString, SectionReader> readers{{name, objectReader(root, section, name)}};
    for (const Field* f : sectionFields(section)) {
        if (!f->saved)
            continue;
        const QString object = f->jsonObject();
        auto it = readers.find(object);
        if (it == readers.end())
            it = readers.insert(object, objectReader(root, section, object));
        const SectionReader& reader = *it;
        if (reader.has(f->jsonKey()))
            (f->load ? f->load : f->set)(s, readFieldValue(*f, reader.value(f->jsonKey())));
    }
}

void readExpertLists(const QJsonObject& root, core::ExpertsInputs& e)
{
    const SectionReader s(root, "experts", knownKeys(core::Section::Experts, "experts"));
    if (s.has("assignments")) {
        const std::string field = s.field("assignments");
        const std::string expected = "a list with one list of expert ids per source rank";
        if (!s.value("assignments").isArray())
            throw InputError(field, expected);
        const QJsonArray lists = s.value("assignments").toArray();
        std::vector<std::vector<std::int64_t>> assignments;
        for (qsizetype i = 0; i < lists.size(); ++i) {
            const std::string rowField = field + '[' + std::to_string(i) + ']';
            assignments.push_back(wholeArray(
                lists.at(i), rowField, "a list of expert ids chosen by rank " + std::to_string(i)));
        }
        e.assignments = std::move(assignments);
    }
    if (s.has("expert_to_rank"))
        e.expertToRank = wholeArray(s.value("expert_to_rank"), s.field("expert_to_rank"),
                                    "a list with the owner rank of each expert");
}

void readFp8Values(const QJsonObject& root, core::Fp8Inputs& f)
{
    const SectionReader s(root, "fp8", knownKeys(core::Section::Fp8, "fp8"));
    if (!s.has("values"))
        return;
    const std::string field = s.field("values");
    const std::string expected = "a matrix: a list of rows, each a list of numbers";
    if (!s.value("values").isArray() || s.value("values").toArray().isEmpty())
        throw InputError(field, expected);
    const QJsonArray rows = s.value("values").toArray();
    qsizetype cols = -1;
    for (qsizetype i = 0; i < rows.size(); ++i) {
        const std::string rowField = field + '[' + std::to_string(i) + ']';
        if (!rows.at(i).isArray() || rows.at(i).toArray().isEmpty())
            throw InputError(rowField, "a row: a non-empty list of numbers");
        const qsizetype n = rows.at(i).toArray().size();
        if (cols < 0)
            cols = n;
        else if (n != cols)
            throw InputError(
                rowField, "a row of " + std::to_string(cols) + " values, as long as the first row");
    }
    core::MatrixF values(rows.size(), cols);
    const double floatMax = std::numeric_limits<float>::max();
    for (qsizetype i = 0; i < rows.size(); ++i) {
        const QJsonArray row = rows.at(i).toArray();
        for (qsizetype j = 0; j < cols; ++j) {
            const std::string cell =
                field + '[' + std::to_string(i) + "][" + std::to_string(j) + ']';
            const QJsonValue v = row.at(j);
            if (!v.isDouble() || !std::isfinite(v.toDouble()) || std::abs(v.toDouble()) > floatMax)
                throw InputError(cell, "a finite number within float32 range (|x| <= 3.4e38)");
            // Read as double, then rounded to the nearest float32.
            values(i, j) = static_cast<float>(v.toDouble());
        }
    }
    f.values = std::move(values);
}

qsizetype lineOf(const QByteArray& text, int offset, qsizetype* column)
{
    const QByteArray before = text.left(offset);
    const qsizetype lastNewline = before.lastIndexOf('\n');
    *column = offset - lastNewline;
    return before.count('\n') + 1;
}

/// The value at a JSON path such as `experts.assignments[0][2]`, or undefined.
/// The value at an error's JSON path (`memory.segments`, `experts.assignments[0][2]`), or
/// undefined. A path is read one step at a time, each step consuming at least one character, so
/// any key text ends the walk: a key that itself holds '.' or '[' is matched whole where the
/// object has it, and a '[' with no index and ']' after it ends the walk with nothing found.
QJsonValue valueAt(const QJsonObject& object, const std::string& field)
{
    QJsonValue current = object;
    const QString path = QString::fromStdString(field);
    QStringView rest = path;
    while (!rest.isEmpty() && !current.isUndefined()) {
        if (rest.startsWith('.') && current.isObject())
            rest = rest.mid(1);
        if (current.isObject() && current.toObject().contains(rest))
            return current.toObject().value(rest);
        if (rest.startsWith('[')) {
            const qsizetype close = rest.indexOf(']');
            bool isIndex = false;
            const int index = close > 1 ? rest.mid(1, close - 1).toInt(&isIndex) : -1;
            if (!isIndex || index < 0 || !current.isArray())
                return QJsonValue(QJsonValue::Undefined);
            current = current.toArray().at(index);
            rest = rest.mid(close + 1);
            continue;
        }
        qsizetype end = 0;
        while (end < rest.size() && rest[end] != '.' && rest[end] != '[')
            ++end;
        if (end == 0 || !current.isObject())
            return QJsonValue(QJsonValue::Undefined);
        current = current.toObject().value(rest.left(end));
        rest = rest.mid(end);
    }
    return current;
}

QString shortJson(const QJsonValue& value)
{
    QString text;
    if (value.isArray())
        text = QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
    else if (value.isObject())
        text = QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    else
        text = QString::fromUtf8(QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact))
                   .mid(1)
                   .chopped(1);
    return text.size() > 40 ? text.left(37) + "..." : text;
}

} // namespace

core::Scenario scenarioFromJson(const QJsonObject& object)
{
    // "title" and "source" describe a preset (what it is, where its numbers come from).
    for (const char* meta : {"title", "source"})
        if (object.contains(meta) && !object.value(meta).isString())
            throw InputError(meta, "a string");
    const QStringList sections = {"scalelab_scenario", "title",    "source",  "memory", "zero",
                                  "tensor_parallel",   "pipeline", "experts", "fp8",    "plan"};
    for (const QString& key : object.keys())
        if (!sections.contains(key))
            throw InputError(key.toStdString(),
                             "one of the sections of a scenario ("
                                 + sections.join(", ").toStdString() + ")");
    if (object.contains("scalelab_scenario")) {
        const QJsonValue version = object.value("scalelab_scenario");
        if (!version.isDouble() || version.toDouble() != 1.0)
            throw InputError("scalelab_scenario", "1 (the only scenario format so far)");
    }
    core::Scenario scenario;
    scenario.title = object.value("title").toString().toStdString();
    scenario.source = object.value("source").toString().toStdString();
    for (std::size_t i = 0; i < core::kSectionNames.size(); ++i)
        readSection(object, static_cast<core::Section>(i), scenario);
    readExpertLists(object, scenario.experts);
    readFp8Values(object, scenario.fp8);
    core::validate(scenario);
    return scenario;
}

QJsonObject readScenarioObject(const QString& path)
{
    const QFileInfo info(path);
    if (!info.exists())
        throw InputError::problem("", "no such file");
    if (info.isDir())
        throw InputError("", "a scenario file, not a folder");
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw InputError("", "a readable file (" + file.errorString().toStdString() + ")");
    const QByteArray text = file.readAll();
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(text, &error);
    if (error.error != QJsonParseError::NoError) {
        qsizetype column = 0;
        const qsizetype line = lineOf(text, error.offset, &column);
        throw InputError("",
                         "valid JSON (line " + std::to_string(line) + ", column "
                             + std::to_string(column) + ": " + error.errorString().toStdString()
                             + ")");
    }
    if (!document.isObject())
        throw InputError("", "a JSON object of sections");
    return document.object();
}

core::Scenario loadScenarioFile(const QString& path)
{
    return scenarioFromJson(readScenarioObject(path));
}

namespace {

/// Writes `value` at `key` of the object at `path` under `root`, making the objects on the way.
void setAt(QJsonObject& root, QStringList path, const QString& key, const QJsonValue& value)
{
    if (path.isEmpty()) {
        root.insert(key, value);
        return;
    }
    const QString first = path.takeFirst();
    QJsonObject child = root.value(first).toObject();
    setAt(child, path, key, value);
    root.insert(first, child);
}

/// The lists and matrices the table does not describe: explicit routing and FP8 values.
void writeLists(const core::Scenario& s, QJsonObject& out)
{
    const auto whole = [](std::int64_t v) {
        return QJsonValue(static_cast<qint64>(v));
    };
    QJsonObject experts = out.value("experts").toObject();
    QJsonObject fp8 = out.value("fp8").toObject();
    if (s.experts.assignments) {
        QJsonArray lists;
        for (const auto& list : *s.experts.assignments) {
            QJsonArray ids;
            for (std::int64_t id : list)
                ids.append(whole(id));
            lists.append(ids);
        }
        experts.insert("assignments", lists);
    }
    if (s.experts.expertToRank) {
        QJsonArray owners;
        for (std::int64_t r : *s.experts.expertToRank)
            owners.append(whole(r));
        experts.insert("expert_to_rank", owners);
    }
    if (s.fp8.values) {
        QJsonArray rows;
        for (Eigen::Index i = 0; i < s.fp8.values->rows(); ++i) {
            QJsonArray row;
            for (Eigen::Index j = 0; j < s.fp8.values->cols(); ++j)
                row.append(static_cast<double>((*s.fp8.values)(i, j)));
            rows.append(row);
        }
        fp8.insert("values", rows);
    }
    out.insert("experts", experts);
    out.insert("fp8", fp8);
}

} // namespace

QJsonObject scenarioToJson(const core::Scenario& s)
{
    QJsonObject out{{"scalelab_scenario", 1}};
    for (const Field& f : fields()) {
        if (!f.saved || (f.isSet && !f.isSet(s)))
            continue;
        setAt(out, f.jsonObject().split('.'), f.jsonKey(), writeFieldValue(f, f.get(s)));
    }
    writeLists(s, out);
    if (!s.title.empty())
        out.insert("title", QString::fromStdString(s.title));
    if (!s.source.empty())
        out.insert("source", QString::fromStdString(s.source));
    return out;
}

namespace {

/// The line with every control character written as its JSON escape: a key may hold a newline
/// or a tab (the parser takes them), and an error line must stay one line whatever it quotes.
QString oneLine(const QString& line)
{
    QString out;
    out.reserve(line.size());
    for (const QChar c : line) {
        if (c == '\n')
            out += QStringLiteral("\\n");
        else if (c == '\t')
            out += QStringLiteral("\\t");
        else if (c == '\r')
            out += QStringLiteral("\\r");
        else if (c.unicode() < 0x20 || c.unicode() == 0x7f || c == QChar::LineSeparator
                 || c == QChar::ParagraphSeparator)
            out += QStringLiteral("\\u%1").arg(c.unicode(), 4, 16, QLatin1Char('0'));
        else
            out += c;
    }
    return out;
}

} // namespace

QString describeInputError(const QString& file, const core::InputError& error,
                           const QJsonObject& object)
{
    QString line = file.isEmpty() ? QString() : file + ": ";
    if (!error.field().empty())
        line += QString::fromStdString(error.field()) + ": ";
    if (error.isExpectation())
        line += "expected ";
    line += QString::fromStdString(error.expected());
    if (!error.field().empty()) {
        const QJsonValue found = valueAt(object, error.field());
        if (!found.isUndefined())
            line += (error.isExpectation() ? ", found " : " (found ") + shortJson(found)
                + (error.isExpectation() ? "" : ")");
    }
    return oneLine(line);
}

} // namespace scalelab::document
