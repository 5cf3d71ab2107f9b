// SPDX-License-Identifier: GPL-3.0-or-later
#include "upgradetarget.h"

namespace slp {

UpgradeModel findUpgradeModel(QByteArrayView target)
{
    UpgradeModel out;
    const qsizetype question = target.indexOf('?');
    if (question < 0)
        return out;
    qsizetype end = target.indexOf('#', question);
    if (end < 0)
        end = target.size();
    qsizetype pos = question + 1;
    while (pos <= end) {
        qsizetype amp = target.indexOf('&', pos);
        if (amp < 0 || amp > end)
            amp = end;
        const QByteArrayView pair = target.sliced(pos, amp - pos);
        if (pair.startsWith("model=")) {
            out.found = true;
            out.valueStart = pos + 6;
            out.valueLength = amp - out.valueStart;
            out.id = QByteArray::fromPercentEncoding(
                target.sliced(out.valueStart, out.valueLength).toByteArray());
            return out;
        }
        pos = amp + 1;
    }
    return out;
}

QByteArray renameUpgradeModel(QByteArrayView target, const UpgradeModel &model,
                              QByteArrayView newId)
{
    if (!model.found)
        return target.toByteArray();
    QByteArray out = target.first(model.valueStart).toByteArray();
    out.append(newId.toByteArray().toPercentEncoding());
    out.append(target.sliced(model.valueStart + model.valueLength));
    return out;
}

} // namespace slp
