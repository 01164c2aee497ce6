#include "scenariojson.h"

#include <QFile>
#include <QFileInfo>
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

namespace scalelab::app {

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

    void whole(const QString& key, std::int64_t& out) const
    {
        if (has(key))
            out = wholeNumber(value(key), field(key));
    }

    void number(const QString& key, double& out) const
    {
        if (has(key))
            out = finiteNumber(value(key), field(key));
    }

    void boolean(const QString& key, bool& out) const
    {
        if (!has(key))
            return;
        if (!value(key).isBool())
            throw InputError(field(key), "true or false");
        out = value(key).toBool();
    }

    void optionalWhole(const QString& key, std::optional<std::int64_t>& out) const
    {
        if (has(key))
            out = wholeNumber(value(key), field(key));
    }

    /// The object under `key` as its own section (e.g. plan.model).
    SectionReader child(const QString& key, QStringList known) const
    {
        return SectionReader(m_object, key, std::move(known), m_name + '.');
    }

    template <typename Enum>
    void choice(const QString& key, const std::map<QString, Enum>& names, Enum& out) const
    {
        if (!has(key))
            return;
        QStringList quoted;
        for (const auto& [name, e] : names)
            quoted << '"' + name + '"';
        const std::string expected = "one of " + quoted.join(", ").toStdString();
        if (!value(key).isString())
            throw InputError(field(key), expected);
        const auto it = names.find(value(key).toString());
        if (it == names.end())
            throw InputError(field(key), expected);
        out = it->second;
    }

private:
    QString m_name;
    QJsonObject m_object;
};

const std::map<QString, core::Schedule> kSchedules = {
    {"gpipe", core::Schedule::GPipe},
    {"1f1b", core::Schedule::OneFOneB},
    {"interleaved", core::Schedule::Interleaved},
};

const std::map<QString, core::ExpertPopularity> kPopularities = {
    {"shuffled", core::ExpertPopularity::Shuffled},
    {"by_id", core::ExpertPopularity::ById},
};

const std::map<QString, core::Recompute> kRecomputes = {
    {"none", core::Recompute::None},
    {"selective", core::Recompute::Selective},
    {"full", core::Recompute::Full},
};

const std::map<QString, core::Fp8Format> kFormats = {
    {"e4m3", core::Fp8Format::E4M3},
    {"e5m2", core::Fp8Format::E5M2},
};

template <typename Enum> QString nameOf(const std::map<QString, Enum>& names, Enum e)
{
    for (const auto& [name, value] : names)
        if (value == e)
            return name;
    return {};
}

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

void readMemory(const QJsonObject& root, core::MemoryInputs& m)
{
    const SectionReader s(root, "memory",
                          {"parameters", "weight_bytes", "grad_bytes", "master_bytes",
                           "moment_bytes", "tokens", "hidden", "layers", "bytes_per_value",
                           "tensors_per_layer", "segments"});
    s.whole("parameters", m.parameters);
    s.whole("weight_bytes", m.weightBytes);
    s.whole("grad_bytes", m.gradBytes);
    s.whole("master_bytes", m.masterBytes);
    s.whole("moment_bytes", m.momentBytes);
    s.whole("tokens", m.tokens);
    s.whole("hidden", m.hidden);
    s.whole("layers", m.layers);
    s.whole("bytes_per_value", m.bytesPerValue);
    s.whole("tensors_per_layer", m.tensorsPerLayer);
    s.whole("segments", m.segments);
}

void readZero(const QJsonObject& root, core::ZeroInputs& z)
{
    const SectionReader s(root, "zero",
                          {"parameters", "ranks", "weight_bytes", "grad_bytes", "optimizer_bytes"});
    s.whole("parameters", z.parameters);
    s.whole("ranks", z.ranks);
    s.whole("weight_bytes", z.weightBytes);
    s.whole("grad_bytes", z.gradBytes);
    s.whole("optimizer_bytes", z.optimizerBytes);
}

void readTensorParallel(const QJsonObject& root, core::TensorParallelInputs& t)
{
    const SectionReader s(root, "tensor_parallel",
                          {"tokens", "d_model", "d_ff", "ranks", "bytes_per_value", "seed"});
    s.whole("tokens", t.tokens);
    s.whole("d_model", t.dModel);
    s.whole("d_ff", t.dFf);
    s.whole("ranks", t.ranks);
    s.whole("bytes_per_value", t.bytesPerValue);
    s.whole("seed", t.seed);
}

void readPipeline(const QJsonObject& root, core::PipelineInputs& p)
{
    const SectionReader s(
        root, "pipeline",
        {"stages", "microbatches", "schedule", "virtual_stages", "forward_time", "backward_time"});
    s.whole("stages", p.stages);
    s.whole("microbatches", p.microbatches);
    s.choice("schedule", kSchedules, p.schedule);
    s.whole("virtual_stages", p.virtualStages);
    s.number("forward_time", p.forwardTime);
    s.number("backward_time", p.backwardTime);
}

void readExperts(const QJsonObject& root, core::ExpertsInputs& e)
{
    const SectionReader s(root, "experts",
                          {"ranks", "experts", "assignments", "expert_to_rank", "tokens_per_rank",
                           "top_k", "skew", "capacity_factor", "seed", "popularity"});
    s.whole("ranks", e.ranks);
    s.whole("experts", e.experts);
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
    s.whole("tokens_per_rank", e.tokensPerRank);
    s.whole("top_k", e.topK);
    s.number("skew", e.skew);
    s.number("capacity_factor", e.capacityFactor);
    s.whole("seed", e.seed);
    s.choice("popularity", kPopularities, e.popularity);
}

void readFp8(const QJsonObject& root, core::Fp8Inputs& f)
{
    const SectionReader s(
        root, "fp8", {"format", "block_size", "values", "rows", "cols", "outlier_scale", "seed"});
    s.choice("format", kFormats, f.format);
    s.whole("block_size", f.blockSize);
    s.whole("rows", f.rows);
    s.whole("cols", f.cols);
    s.number("outlier_scale", f.outlierScale);
    s.whole("seed", f.seed);
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

void readPlan(const QJsonObject& root, core::PlanInputs& p)
{
    const SectionReader s(root, "plan",
                          {"model", "sequence", "micro_batch", "global_batch", "gpus",
                           "tensor_parallel", "pipeline_parallel", "virtual_stages",
                           "expert_parallel", "sequence_parallel", "recompute", "zero_stage",
                           "weight_bytes", "grad_bytes", "optimizer_bytes", "gpu_memory_gib"});
    const SectionReader m = s.child("model",
                                    {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab",
                                     "gated_mlp", "tied_embeddings", "experts", "top_k",
                                     "expert_ffn_hidden", "shared_experts", "dense_layers"});
    m.whole("layers", p.model.layers);
    m.whole("hidden", p.model.hidden);
    m.whole("heads", p.model.heads);
    m.optionalWhole("kv_heads", p.model.kvHeads);
    m.whole("ffn_hidden", p.model.ffnHidden);
    m.whole("vocab", p.model.vocab);
    m.boolean("gated_mlp", p.model.gatedMlp);
    m.boolean("tied_embeddings", p.model.tiedEmbeddings);
    m.whole("experts", p.model.experts);
    m.whole("top_k", p.model.topK);
    m.optionalWhole("expert_ffn_hidden", p.model.expertFfnHidden);
    m.whole("shared_experts", p.model.sharedExperts);
    m.whole("dense_layers", p.model.denseLayers);
    s.whole("sequence", p.sequence);
    s.whole("micro_batch", p.microBatch);
    s.whole("global_batch", p.globalBatch);
    s.whole("gpus", p.gpus);
    s.whole("tensor_parallel", p.tensorParallel);
    s.whole("pipeline_parallel", p.pipelineParallel);
    s.whole("virtual_stages", p.virtualStages);
    s.whole("expert_parallel", p.expertParallel);
    s.boolean("sequence_parallel", p.sequenceParallel);
    s.choice("recompute", kRecomputes, p.recompute);
    s.whole("zero_stage", p.zeroStage);
    s.whole("weight_bytes", p.weightBytes);
    s.whole("grad_bytes", p.gradBytes);
    s.whole("optimizer_bytes", p.optimizerBytes);
    s.number("gpu_memory_gib", p.gpuMemoryGib);
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
    readMemory(object, scenario.memory);
    readZero(object, scenario.zero);
    readTensorParallel(object, scenario.tensorParallel);
    readPipeline(object, scenario.pipeline);
    readExperts(object, scenario.experts);
    readFp8(object, scenario.fp8);
    readPlan(object, scenario.plan);
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

QJsonObject scenarioToJson(const core::Scenario& s)
{
    const auto whole = [](std::int64_t v) {
        return QJsonValue(static_cast<qint64>(v));
    };
    QJsonObject memory{
        {"parameters", whole(s.memory.parameters)},
        {"weight_bytes", whole(s.memory.weightBytes)},
        {"grad_bytes", whole(s.memory.gradBytes)},
        {"master_bytes", whole(s.memory.masterBytes)},
        {"moment_bytes", whole(s.memory.momentBytes)},
        {"tokens", whole(s.memory.tokens)},
        {"hidden", whole(s.memory.hidden)},
        {"layers", whole(s.memory.layers)},
        {"bytes_per_value", whole(s.memory.bytesPerValue)},
        {"tensors_per_layer", whole(s.memory.tensorsPerLayer)},
        {"segments", whole(s.memory.segments)},
    };
    QJsonObject zero{
        {"parameters", whole(s.zero.parameters)},          {"ranks", whole(s.zero.ranks)},
        {"weight_bytes", whole(s.zero.weightBytes)},       {"grad_bytes", whole(s.zero.gradBytes)},
        {"optimizer_bytes", whole(s.zero.optimizerBytes)},
    };
    QJsonObject tensorParallel{
        {"tokens", whole(s.tensorParallel.tokens)},
        {"d_model", whole(s.tensorParallel.dModel)},
        {"d_ff", whole(s.tensorParallel.dFf)},
        {"ranks", whole(s.tensorParallel.ranks)},
        {"bytes_per_value", whole(s.tensorParallel.bytesPerValue)},
        {"seed", whole(s.tensorParallel.seed)},
    };
    QJsonObject pipeline{
        {"stages", whole(s.pipeline.stages)},
        {"microbatches", whole(s.pipeline.microbatches)},
        {"schedule", nameOf(kSchedules, s.pipeline.schedule)},
        {"virtual_stages", whole(s.pipeline.virtualStages)},
        {"forward_time", s.pipeline.forwardTime},
        {"backward_time", s.pipeline.backwardTime},
    };
    QJsonObject experts{
        {"ranks", whole(s.experts.ranks)},
        {"experts", whole(s.experts.experts)},
        {"tokens_per_rank", whole(s.experts.tokensPerRank)},
        {"top_k", whole(s.experts.topK)},
        {"skew", s.experts.skew},
        {"capacity_factor", s.experts.capacityFactor},
        {"seed", whole(s.experts.seed)},
        {"popularity", nameOf(kPopularities, s.experts.popularity)},
    };
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
    QJsonObject fp8{
        {"format", nameOf(kFormats, s.fp8.format)},
        {"block_size", whole(s.fp8.blockSize)},
        {"rows", whole(s.fp8.rows)},
        {"cols", whole(s.fp8.cols)},
        {"outlier_scale", s.fp8.outlierScale},
        {"seed", whole(s.fp8.seed)},
    };
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
    const core::ModelShape& shape = s.plan.model;
    QJsonObject model{
        {"layers", whole(shape.layers)},
        {"hidden", whole(shape.hidden)},
        {"heads", whole(shape.heads)},
        {"ffn_hidden", whole(shape.ffnHidden)},
        {"vocab", whole(shape.vocab)},
        {"gated_mlp", shape.gatedMlp},
        {"tied_embeddings", shape.tiedEmbeddings},
        {"experts", whole(shape.experts)},
        {"top_k", whole(shape.topK)},
        {"shared_experts", whole(shape.sharedExperts)},
        {"dense_layers", whole(shape.denseLayers)},
    };
    // Keys that default to another key stay absent unless set, so they keep following it.
    if (shape.kvHeads)
        model.insert("kv_heads", whole(*shape.kvHeads));
    if (shape.expertFfnHidden)
        model.insert("expert_ffn_hidden", whole(*shape.expertFfnHidden));
    QJsonObject plan{
        {"model", model},
        {"sequence", whole(s.plan.sequence)},
        {"micro_batch", whole(s.plan.microBatch)},
        {"global_batch", whole(s.plan.globalBatch)},
        {"gpus", whole(s.plan.gpus)},
        {"tensor_parallel", whole(s.plan.tensorParallel)},
        {"pipeline_parallel", whole(s.plan.pipelineParallel)},
        {"virtual_stages", whole(s.plan.virtualStages)},
        {"expert_parallel", whole(s.plan.expertParallel)},
        {"sequence_parallel", s.plan.sequenceParallel},
        {"recompute", nameOf(kRecomputes, s.plan.recompute)},
        {"zero_stage", whole(s.plan.zeroStage)},
        {"weight_bytes", whole(s.plan.weightBytes)},
        {"grad_bytes", whole(s.plan.gradBytes)},
        {"optimizer_bytes", whole(s.plan.optimizerBytes)},
        {"gpu_memory_gib", s.plan.gpuMemoryGib},
    };
    QJsonObject out{
        {"scalelab_scenario", 1},
        {"memory", memory},
        {"zero", zero},
        {"tensor_parallel", tensorParallel},
        {"pipeline", pipeline},
        {"experts", experts},
        {"fp8", fp8},
        {"plan", plan},
    };
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

} // namespace scalelab::app
