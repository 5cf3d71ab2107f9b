// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "body/bodyedits.h"
#include "wire/http1.h"

#include <QByteArray>
#include <QString>

#include <optional>

namespace slp {

// Where a request names its model, by the body's Content-Type: a multipart/form-data body in
// its "model" part; any other body (JSON, or no Content-Type at all) in its top-level "model"
// key. An application/x-www-form-urlencoded body that is not a JSON object is refused with
// 415 (one that is, as `curl -d` sends JSON, is routed as JSON, as it always was).
class ModelLocation
{
public:
    enum class Kind
    {
        Json,
        Multipart,
    };

    static ModelLocation locate(const HeaderList &headers, const QByteArray &body);

    // 0 when the model was found; else the status to answer (400, 415) with error().
    int status() const { return m_status; }
    const QString &error() const { return m_error; }
    const QString &model() const { return m_model; }
    Kind kind() const { return m_kind; }
    const BodyScan &json() const { return m_json; } // Kind::Json only

    // Why `newModel` cannot replace the model in this body (a multipart value must not hold
    // the body's delimiter), or an empty string.
    QString renameError(const QString &newModel) const;
    // The edit that changes only the model's value bytes to `newModel` (renameError() empty).
    QList<ByteEdit> renameEdits(const QString &newModel) const;

private:
    friend class ModelLocator;

    Kind m_kind = Kind::Json;
    int m_status = 0;
    QString m_error;
    QString m_model;
    BodyScan m_json;
    MultipartScan m_multipart;
    QByteArray m_boundary;
};

// Finds where the model is while the body arrives: the Content-Type is read once from the
// head, the scan it names is fed every read (JsonBodyScanner, MultipartBodyScanner), and
// finish() gives the same ModelLocation as locate() on the whole body, with most of the scan
// already done. A client connection holds one for each request the router routes by its
// model and shows it every read; the request then carries it to the router.
class ModelLocator
{
public:
    explicit ModelLocator(const HeaderList &headers);
    virtual ~ModelLocator() = default; // tests record what a connection shows it

    // `soFar` is every body byte read so far, in the request's one buffer (its address may
    // change between calls while a chunked body grows): the scanners keep offsets.
    virtual void arrived(QByteArrayView soFar);
    ModelLocation finish(const QByteArray &body);

private:
    ModelLocation m_where; // the kind, the boundary and any Content-Type error, from the head
    bool m_form = false;   // labelled application/x-www-form-urlencoded
    JsonBodyScanner m_json;
    std::optional<MultipartBodyScanner> m_multipart; // a usable multipart boundary
};

} // namespace slp
