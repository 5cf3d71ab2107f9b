// SPDX-License-Identifier: GPL-3.0-or-later
#include "observe/requestid.h"

#include <QRandomGenerator>

namespace slp {

QByteArray newRequestId()
{
    quint32 words[3];
    QRandomGenerator::global()->fillRange(words);
    QByteArray raw(reinterpret_cast<const char *>(words), sizeof(words));
    QByteArray id = raw.toHex();
    id.prepend("slpq", 4);
    return id;
}

} // namespace slp
