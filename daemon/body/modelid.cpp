// SPDX-License-Identifier: GPL-3.0-or-later
#include "body/modelid.h"

#include "body/jsontext.h"

namespace slp {

ModelIdFault modelIdFault(QByteArrayView utf8, qsizetype *badByte)
{
    if (utf8.isEmpty())
        return ModelIdFault::Empty;
    if (utf8.size() > maxModelBytes)
        return ModelIdFault::TooLong;
    const qsizetype bad =
        jsontext::firstInvalidUtf8(reinterpret_cast<const uchar *>(utf8.data()), 0, utf8.size());
    if (bad < 0)
        return ModelIdFault::None;
    if (badByte)
        *badByte = bad;
    return ModelIdFault::NotUtf8;
}

QString modelIdError(QByteArrayView utf8, const QString &what, ModelIdFault *fault)
{
    qsizetype bad = -1;
    const ModelIdFault found = modelIdFault(utf8, &bad);
    if (fault)
        *fault = found;
    switch (found) {
    case ModelIdFault::None:
        return {};
    case ModelIdFault::Empty:
        return QStringLiteral("%1 is empty: name the model to use").arg(what);
    case ModelIdFault::TooLong:
        return QStringLiteral("%1 is %2 bytes: at most %3 allowed")
            .arg(what)
            .arg(utf8.size())
            .arg(maxModelBytes);
    case ModelIdFault::NotUtf8:
        return QStringLiteral("%1 is not valid UTF-8 (byte %2)").arg(what).arg(bad);
    }
    return {};
}

} // namespace slp
