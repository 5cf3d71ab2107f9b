// SPDX-License-Identifier: GPL-3.0-or-later
// editions[]: templates over the backends, expanded at load into ordinary routes.
#include "config/compiler.h"
#include "config/diagnostics.h"

#include <QRegularExpression>

namespace slp::configc {

namespace {

const QList<QString> kEditionUrlFields = {QStringLiteral("Name"), QStringLiteral("URL")};
const QList<QString> kEditionModelFields = {QStringLiteral("Name"), QStringLiteral("URL"),
                                            QStringLiteral("Model")};

// Parses a template field, reporting errors at the offending column.
std::optional<TextTemplate> readTemplate(YamlReader &in, const Field &k, const QString &keyPath,
                                         const QList<QString> &allowed)
{
    const auto text = in.readString(k, keyPath);
    if (!text)
        return std::nullopt;
    if (text->trimmed().isEmpty()) {
        in.error(k.mark(), QStringLiteral("%1 is empty").arg(keyPath),
                 keyPath.endsWith(QLatin1String(".model"))
                     ? QStringLiteral("remove model: to forward the edition's id unchanged")
                     : QStringLiteral("give a URL template such as "
                                      "http://copydesk-{{.Name}}:8100"));
        return std::nullopt;
    }
    QString why;
    int col = 0;
    auto tpl = TextTemplate::parse(*text, allowed, &why, &col);
    if (!tpl) {
        QString hint = QStringLiteral("use {{.Field}} with one of: .%1")
                           .arg(allowed.join(QStringLiteral(", .")));
        static const QRegularExpression unknownField(QStringLiteral("unknown field \\.(\\w+)"));
        const auto m = unknownField.match(why);
        if (m.hasMatch() && m.captured(1) == u"Model") {
            hint = QStringLiteral(".Model is only available in an edition's model:; %1").arg(hint);
        } else if (m.hasMatch()) {
            const QString guess = closest(m.captured(1), allowed);
            if (!guess.isEmpty())
                hint = QStringLiteral("did you mean {{.%1}}? %2").arg(guess, hint);
        }
        in.error(k.mark(),
                 QStringLiteral("%1: bad template %2: %3").arg(keyPath, goQuote(*text), why), hint,
                 in.valueColumnOffset(k.value) + col);
    }
    return tpl;
}

void readSuffix(YamlReader &in, const Field &f, const QString &path, Edition &ed)
{
    const auto s = in.readString(f, path);
    if (!s)
        return;
    ed.column = f.mark().column + 1;
    if (s->isEmpty()) {
        in.error(f.mark(), QStringLiteral("%1 is empty").arg(path),
                 QStringLiteral("an empty suffix would repeat every backend's id; use e.g. "
                                "-edited"));
    } else if (hasSpaceOrControl(*s)) {
        in.error(f.mark(), QStringLiteral("%1 %2 contains whitespace").arg(path, goQuote(*s)),
                 QStringLiteral("model ids are matched exactly; remove the spaces"));
    } else {
        ed.suffix = *s;
    }
}

void readUrlTemplate(YamlReader &in, const Field &f, const QString &path, Edition &ed)
{
    ed.urlField = f;
    ed.urlTemplate = readTemplate(in, f, path, kEditionUrlFields);
}

void readModelTemplate(YamlReader &in, const Field &f, const QString &path, Edition &ed)
{
    ed.modelField = f;
    ed.modelTemplate = readTemplate(in, f, path, kEditionModelFields);
    ed.modelOk = ed.modelTemplate.has_value();
}

void readRetry(YamlReader &in, const Field &f, const QString &path, Edition &ed)
{
    if (const auto v = in.readBool(f, path); v && *v)
        in.error(f.mark(),
                 QStringLiteral("%1: retry: true on an edition is not allowed: a retry re-runs "
                                "the edition's filter")
                     .arg(ed.path),
                 QStringLiteral("remove retry: or set it to false"));
}

// apply_to: which backends, by name; "*" (the default) is all of them.
void readApplyTo(YamlReader &in, const Field &k, const QString &path, Edition &ed)
{
    ed.applyAll = false;
    const QList<QString> &knownNames = ed.backendNames;
    const QString listHint = QStringLiteral("write apply_to: [\"*\"] or a list of backend names, "
                                            "e.g. [%1]")
                                 .arg(quoteList(knownNames.mid(0, 2)));
    if (!k.value.IsSequence()) {
        in.error(k.mark(), QStringLiteral("%1 must be a list, not %2").arg(path, kindOf(k.value)),
                 listHint);
        ed.applyOk = false;
        return;
    }
    if (k.value.size() == 0) {
        in.error(k.mark(),
                 QStringLiteral("%1 is empty: the edition applies to no backend").arg(path),
                 QStringLiteral("remove the edition, or %1").arg(listHint));
        ed.applyOk = false;
        return;
    }
    int i = 0;
    for (const YAML::Node &item : k.value) {
        const QString itemPath = QStringLiteral("%1[%2]").arg(path).arg(i++);
        const auto name = in.readString(Field{k.key, item, true}, itemPath);
        if (!name) {
            ed.applyOk = false;
        } else if (*name == u"*") {
            ed.applyAll = true;
        } else if (ed.applyTo.contains(*name)) {
            in.error(item.Mark(),
                     QStringLiteral("%1: backend \"%2\" is listed twice").arg(itemPath, *name),
                     QStringLiteral("list each backend once"));
        } else if (!knownNames.contains(*name)) {
            const QString guess = closest(*name, knownNames);
            QString hint = QStringLiteral("known backends: %1").arg(quoteList(knownNames));
            if (!guess.isEmpty())
                hint = QStringLiteral("did you mean \"%1\"? %2").arg(guess, hint);
            in.error(item.Mark(), QStringLiteral("%1: unknown backend \"%2\"").arg(itemPath, *name),
                     hint);
            ed.applyOk = false;
        } else {
            ed.applyTo.insert(*name);
        }
    }
}

// In this order in the "known keys" hint.
const Key<Edition> kEditionKeys[] = {
    {"suffix", nullptr, readSuffix,
     "add \"suffix: -something\": edition ids are backend name + suffix"},
    {"url", nullptr, readUrlTemplate,
     "add a URL template such as \"url: http://copydesk-{{.Name}}:8100\""},
    {"model", nullptr, readModelTemplate},
    {"timeout", "60s", routeTimeoutKey<Edition>},
    {"retry", "false", readRetry},
    {"aggregate", "false", routeBoolKey<&Route::aggregate, Edition>},
    // Like aggregate, never inherited from the backend: an edition's upstream is another server.
    {"stream_idle_timeout", "0s", routeZeroOrMoreKey<&Route::streamIdleTimeout, Edition>},
    {"sse_keepalive", "0s", routeZeroOrMoreKey<&Route::sseKeepalive, Edition>},
    // Unlike those, the backend's is the edition's unless it gives its own: it wraps the
    // same model, whose context window it has.
    {"context_length", nullptr, routeContextLengthKey<Edition>},
    // Never the backend's: an edition's url may be another server, which must not get a key
    // meant for the backend.
    {"headers", nullptr, routeHeadersKey<Edition>},
    {"apply_to", nullptr, readApplyTo},
};

} // namespace

std::span<const Key<Edition>> editionKeys()
{
    return kEditionKeys;
}

void Compiler::readEditions(const Field &f)
{
    if (!f.present || f.value.IsNull())
        return;
    if (!f.value.IsSequence()) {
        m_in.error(f.mark(), QStringLiteral("editions must be a list, not %1").arg(kindOf(f.value)),
                   QStringLiteral("write each edition as a list item starting with \"- suffix:\""));
        return;
    }
    int index = 0;
    for (const YAML::Node &node : f.value)
        readEdition(node, index++);
}

void Compiler::readEdition(const YAML::Node &node, int index)
{
    const QString path = QStringLiteral("editions[%1]").arg(index);
    if (!node.IsMap()) {
        m_in.error(
            node.Mark(), QStringLiteral("%1 must be a mapping, not %2").arg(path, kindOf(node)),
            QStringLiteral("write each edition as \"- suffix: ...\" with url: etc. below it"));
        return;
    }
    const auto keys = m_in.fields(node, path, keyNames(editionKeys()));
    Edition ed;
    ed.path = path;
    ed.line = node.Mark().line + 1;
    ed.column = node.Mark().column + 1;
    for (const Backend &b : m_backends)
        if (b.nameOk && !ed.backendNames.contains(b.name))
            ed.backendNames.append(b.name);
    readKeys(m_in, editionKeys(), keys, path, node.Mark(), ed);
    if (!ed.urlTemplate || !ed.applyOk)
        return;
    // A bad suffix or model still lets the URLs be checked, so all errors show in one run.
    expandEdition(ed, !ed.suffix.isEmpty() && ed.modelOk);
}

// One route per applicable backend, in backend order. With `addRoutes` false only the
// rendered URLs are checked.
void Compiler::expandEdition(const Edition &ed, bool addRoutes)
{
    QString firstBadUrl;
    QString firstBadHint;
    int badUrls = 0;
    for (int bi = 0; bi < m_backends.size(); ++bi) {
        const Backend &b = m_backends[bi];
        if (!b.nameOk || !b.urlOk)
            continue; // already reported; do not cascade
        if (!ed.applyAll && !ed.applyTo.contains(b.name))
            continue;
        QHash<QString, QString> values{{QStringLiteral("Name"), b.name},
                                       {QStringLiteral("URL"), b.origin}};
        const QString rendered = ed.urlTemplate->render(values);
        QString why;
        QString hint;
        const auto origin = originOf(rendered, &why, &hint);
        if (!origin) {
            // One error per edition: the same template usually fails the same way everywhere.
            if (badUrls++ == 0) {
                firstBadUrl =
                    QStringLiteral("%1.url: template renders \"%2\" for backend \"%3\": %4")
                        .arg(ed.path, rendered, b.name, why);
                firstBadHint = hint;
            }
            continue;
        }
        if (!addRoutes)
            continue;
        if (std::optional<Route> r = editionRoute(ed, bi, *origin, values)) {
            m_config.routes.append(*r);
            m_routeColumns.append(ed.column);
        }
    }
    if (badUrls > 1)
        firstBadUrl += QStringLiteral(" (and %1 more backends)").arg(badUrls - 1);
    if (badUrls > 0)
        m_in.error(ed.urlField.mark(), firstBadUrl, firstBadHint);
}

std::optional<Route> Compiler::editionRoute(const Edition &ed, int backendIndex,
                                            const QString &origin, QHash<QString, QString> values)
{
    const Backend &b = m_backends[backendIndex];
    Route r = ed.route; // the edition's own per-route keys: never the backend's
    r.id = b.name + ed.suffix;
    r.backendName = b.name;
    r.isEdition = true;
    r.origin = origin;
    r.url = QUrl(origin);
    r.retry = false;
    r.line = ed.line;
    if (!r.contextLength)
        r.contextLength = m_config.routes.at(backendIndex).contextLength;
    if (!ed.modelTemplate) {
        r.nameSource = NameSource::Passthrough;
    } else if (ed.modelTemplate->uses(QStringLiteral("Model")) && !b.pin) {
        // The backend's name is only known at runtime: re-rendered as discovery learns it.
        r.nameSource = NameSource::FollowsBackend;
        r.followsRoute = backendIndex;
        r.modelTemplate = ed.modelTemplate;
    } else {
        if (b.pin)
            values.insert(QStringLiteral("Model"), *b.pin);
        r.nameSource = NameSource::Pinned;
        r.pinnedModel = ed.modelTemplate->render(values);
        if (r.pinnedModel.trimmed().isEmpty()) {
            m_in.error(ed.modelField.mark(),
                       QStringLiteral("%1.model renders an empty name for backend \"%2\"")
                           .arg(ed.path, b.name),
                       QStringLiteral("remove model: to forward the edition's id unchanged"));
            return std::nullopt;
        }
    }
    return r;
}

} // namespace slp::configc
