#include "observe/requestid.h"

#include <QRandomGenerator>

namespace slp {

QByteArray newRequestId()
{
    quint32 words[3];
    QRandomGenerator::global()->fillRange(words);
    QByteArray raw(reinterpret_cast<const char *>(words), sizeof(words));
    return QByteArrayLiteral("slpq") + raw.toHex();
}

} // namespace slp
