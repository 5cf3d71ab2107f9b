// SPDX-License-Identifier: GPL-3.0-or-later
#include "upstream/upstreamtransport.h"

namespace slp {

void UpstreamCall::finishDetached(std::unique_ptr<UpstreamCall> call)
{
    call->detachObserver();
    if (!call->isRunning())
        return; // finished already: deleted here, by the unique_ptr
    call->m_deleteWhenFinished = true;
    call.release(); // owned by itself until notifyFinished()
}

void UpstreamCall::notifyHead(const UpstreamHead &head)
{
    if (m_observer)
        m_observer->upstreamHead(head);
}

void UpstreamCall::notifyReadable()
{
    if (m_observer)
        m_observer->upstreamReadable();
}

void UpstreamCall::notifyFinished()
{
    if (m_deleteWhenFinished) {
        deleteLater(); // the transport still runs inside this call
        return;
    }
    if (m_observer)
        m_observer->upstreamFinished(end());
}

} // namespace slp
