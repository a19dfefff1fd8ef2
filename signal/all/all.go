// Package all is the registry of the signal transports: the one list
// heat-config-notify, 99-refresh-completed and 55-heat-config's status
// record ask which way a deployment's signal goes.
package all

import (
	"github.com/tripleo-go/agent/signal"
	"github.com/tripleo-go/agent/signal/heatapi"
	"github.com/tripleo-go/agent/signal/presigned"
	"github.com/tripleo-go/agent/signal/zaqarqueue"
)

// Transports is every way out, one line each, in the reference's order:
// a pre-signed URL first, on its own; then a Zaqar queue, or else the
// Heat API (a deployment that has both goes by the queue).
var Transports = signal.Transports{
	presigned.Transport,
	zaqarqueue.Transport,
	signal.Else(heatapi.Transport),
}
