package synth

import "strings"

// words, the most common first.
var words = strings.Fields(`
the a to and of in is it for that this with on be we can you file function test
error value should will not use if from have as are add code fix change run build
return type new string list map config server client request response session line
read write update check need make now then call name path data time case handler
let me look at first next also here there what which when where why how just like
more one two all each other some any only same different both before after into out
go package import struct interface method field pointer slice channel goroutine mutex
lock context cancel timeout deadline retry backoff queue buffer stream reader writer
json yaml toml parse encode decode marshal unmarshal schema validate option flag
command argument environment variable directory folder project module dependency
version release commit branch merge rebase diff patch review comment issue bug
feature refactor rename delete move copy restore export import search index query
result page cursor limit offset size count total bytes memory cache disk network
socket websocket http https tls certificate token secret password key auth login
user assistant message tool permission prompt reply turn thinking model usage cost
browser window panel button input box menu modal dialog screen layout style theme
dark light color font width height scroll focus click hover keyboard shortcut escape
database table column row transaction migration sqlite postgres redis kafka grpc
docker container kubernetes deploy pipeline workflow job step cache artifact log
metric trace span alert dashboard latency throughput percentile benchmark profile
allocation garbage collector heap stack frame panic recover defer select range
compile linker binary cross windows darwin linux arm amd64 cgo static shared object
render template markdown html css javascript typescript react component hook props
state store action reducer effect signal event listener handler callback promise
async await future thread process signal exit code status report summary overview
careful honest simple clear small fast slow safe unsafe bounded unbounded correct
wrong missing broken flaky stable green red yellow passing failing skipped pending
apple banana cherry orchard harbor lantern meadow glacier canyon prairie volcano
quartz obsidian marble granite sandstone basalt limestone slate feldspar mica
orbit comet nebula quasar pulsar galaxy asteroid meteor eclipse zenith horizon
violin cello trumpet oboe clarinet bassoon harp timpani piccolo tuba saxophone
`)
