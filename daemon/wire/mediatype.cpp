// SPDX-License-Identifier: GPL-3.0-or-later
#include "wire/mediatype.h"

namespace slp {

bool isEventStream(QByteArrayView contentType)
{
    const QByteArrayView value = contentType.trimmed();
    const qsizetype end = value.indexOf(';');
    const QByteArrayView mediaType = (end < 0 ? value : value.first(end)).trimmed();
    return mediaType.compare("text/event-stream", Qt::CaseInsensitive) == 0;
}

} // namespace slp
