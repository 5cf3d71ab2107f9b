// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QHash>
#include <QList>
#include <QString>

#include <optional>

namespace slp {

// The subset of Go's text/template that editions use: literal text and actions {{.Field}}
// with optional whitespace inside the braces ({{ .Name }}). Parsed once at load; rendered at
// load (url, pinned model) or at runtime (an edition model following its backend's .Model).
class TextTemplate
{
public:
    // `allowedFields` e.g. {"Name","URL"}; an action naming another field, or any other
    // action syntax, is an error. `error` gets a one-line reason, `errorColumn` the 0-based
    // offset in `text` where it starts.
    static std::optional<TextTemplate> parse(const QString &text,
                                             const QList<QString> &allowedFields,
                                             QString *error = nullptr, int *errorColumn = nullptr);

    QString render(const QHash<QString, QString> &fields) const;
    bool uses(const QString &field) const;
    const QString &source() const { return m_source; }

private:
    struct Piece
    {
        bool isField = false;
        QString text; // literal text, or the field name
    };
    QList<Piece> m_pieces;
    QString m_source;
};

} // namespace slp
