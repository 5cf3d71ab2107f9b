// SPDX-License-Identifier: GPL-3.0-or-later
#include "body/modellocator.h"

#include "body/modelid.h"
#include "wire/mediatype.h"

namespace slp {

namespace {
// A UTF-16 code unit of a surrogate pair standing alone: only a \u escape writes one, and
// Python keeps it while Go turns it into U+FFFD.
bool hasLoneSurrogate(const QString &s)
{
    for (qsizetype i = 0; i < s.size(); ++i)
        if (s[i].isHighSurrogate() && i + 1 < s.size() && s[i + 1].isLowSurrogate())
            ++i;
        else if (s[i].isSurrogate())
            return true;
    return false;
}

QString jsonScanError(const BodyScan &scan)
{
    switch (scan.verdict) {
    case BodyScan::Verdict::NotJson:
        return QStringLiteral("request body is not valid JSON: %1").arg(scan.error);
    case BodyScan::Verdict::NotObject:
        return QStringLiteral("request body must be a JSON object");
    case BodyScan::Verdict::ModelMissing:
        return QStringLiteral("request body has no \"model\" field: SLP routes each request by "
                              "its model, the top-level \"model\" string of a JSON body; name "
                              "the model to use (GET /v1/models lists them; docs/HTTP.md)");
    case BodyScan::Verdict::ModelNotString:
        return QStringLiteral("\"model\" must be a string");
    case BodyScan::Verdict::ModelDuplicate:
        return QStringLiteral("\"model\" is given more than once at the top level");
    case BodyScan::Verdict::ModelAmbiguous:
        return QStringLiteral("the request's model is ambiguous: %1").arg(scan.error);
    case BodyScan::Verdict::Ok:
        break;
    }
    return {};
}
} // namespace

ModelLocation ModelLocation::locate(const HeaderList &headers, const QByteArray &body)
{
    return ModelLocator(headers).finish(body);
}

ModelLocator::ModelLocator(const HeaderList &headers)
{
    int types = 0;
    for (const auto &[name, value] : headers)
        types += equalsNoCase(name, "content-type") ? 1 : 0;
    if (types > 1) {
        // Which one a parser keeps (the first, the last, both joined) decides whether it
        // reads the body as JSON or as a form: SLP would route by one reading of many.
        m_where.m_status = 400;
        m_where.m_error = QStringLiteral("the request's model is ambiguous: Content-Type is "
                                         "given more than once, and parsers keep different ones");
        return;
    }
    const QByteArray contentType = headerValue(headers, "content-type");
    // `curl -d '{...}'` labels JSON as a form: that keeps working; a real form does not.
    m_form = isMediaType(contentType, "application/x-www-form-urlencoded");
    if (!isMediaType(contentType, "multipart/form-data"))
        return; // JSON: the OpenAI API's bodies are, and clients often send no Content-Type
    m_where.m_kind = ModelLocation::Kind::Multipart;
    const HeaderParameters type = parseHeaderParameters(contentType);
    m_where.m_boundary = type.value("boundary");
    if (!type.valid) {
        m_where.m_error = QStringLiteral("Content-Type parameters are malformed: %1")
                              .arg(QString::fromLatin1(contentType.left(200)));
    } else if (type.count("boundary") > 1) {
        m_where.m_error = QStringLiteral("multipart/form-data names its boundary more than once");
    } else if (const QByteArray charset = type.value("charset");
               !charset.isEmpty() && !equalsNoCase(charset, "utf-8") &&
               !equalsNoCase(charset, "us-ascii")) {
        // Starlette decodes every field with the request's charset; Go keeps the bytes.
        m_where.m_error = QStringLiteral("the request's model is ambiguous: multipart/form-data "
                                         "with charset=%1, which some parsers apply to the "
                                         "model part and others do not")
                              .arg(QString::fromLatin1(charset.left(40)));
    } else {
        m_where.m_error = boundaryError(m_where.m_boundary);
    }
    if (!m_where.m_error.isEmpty())
        m_where.m_status = 400;
    else
        m_multipart.emplace(m_where.m_boundary);
}

void ModelLocator::arrived(QByteArrayView soFar)
{
    if (m_where.m_status != 0)
        return; // refused from the head: nothing to scan
    if (m_where.m_kind == ModelLocation::Kind::Json)
        m_json.feed(soFar);
    else if (m_multipart)
        m_multipart->feed(soFar);
}

ModelLocation ModelLocator::finish(const QByteArray &body)
{
    ModelLocation where = m_where;
    if (where.m_status != 0)
        return where; // the head was refused already
    if (body.isEmpty() && (where.m_kind == ModelLocation::Kind::Json || m_multipart)) {
        where.m_status = 400;
        where.m_error = QStringLiteral(
            "request has no body: SLP routes each POST by its model, the top-level \"model\" of "
            "a JSON body or the \"model\" part of a multipart/form-data body (docs/HTTP.md)");
        return where;
    }
    if (where.m_kind == ModelLocation::Kind::Json) {
        where.m_json = m_json.finish(body);
        const BodyScan::Verdict verdict = where.m_json.verdict;
        if (verdict == BodyScan::Verdict::Ok) {
            where.m_model = where.m_json.model;
            where.m_error = hasLoneSurrogate(where.m_model)
                                ? QStringLiteral("the request's model is ambiguous: \"model\" "
                                                 "holds a lone surrogate escape, which parsers "
                                                 "decode differently")
                                : modelIdError(where.m_model.toUtf8(), QStringLiteral("\"model\""));
            if (!where.m_error.isEmpty())
                where.m_status = 400;
        } else if (m_form && (verdict == BodyScan::Verdict::NotJson ||
                              verdict == BodyScan::Verdict::NotObject)) {
            where.m_status = 415;
            where.m_error = QStringLiteral(
                "application/x-www-form-urlencoded bodies are not routed: send JSON, or "
                "multipart/form-data with a \"model\" part");
        } else {
            where.m_status = 400;
            where.m_error = jsonScanError(where.m_json);
        }
        return where;
    }
    if (!m_multipart)
        return where; // the Content-Type was refused already
    where.m_multipart = m_multipart->finish(body);
    const bool ok = where.m_multipart.verdict == MultipartScan::Verdict::Ok;
    where.m_status = ok ? 0 : 400;
    where.m_error = where.m_multipart.error;
    where.m_model = where.m_multipart.model;
    return where;
}

QString ModelLocation::renameError(const QString &newModel) const
{
    if (m_kind == Kind::Json || !multipartValueError(newModel, m_boundary))
        return {};
    return QStringLiteral("the multipart boundary occurs in the backend's id for this model: "
                          "send the request with another boundary");
}

QList<ByteEdit> ModelLocation::renameEdits(const QString &newModel) const
{
    if (m_kind == Kind::Json)
        return jsonModelEdits(m_json, newModel);
    return multipartModelEdits(m_multipart, m_boundary, newModel);
}

} // namespace slp
