// MessageChannel, MessagePort and MessageEvent in one realm, compared with node.
const tick = (ms = 10) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (...a) => console.log(JSON.stringify(a));

{
  // Messages are structured clones, delivered in order, as MessageEvents.
  const { port1, port2 } = new MessageChannel();
  const seen = [];
  port1.onmessage = (e) => seen.push([e.type, e.data, e instanceof MessageEvent, e.ports.length]);
  const sent = { n: 1, list: [1, 2] };
  port2.postMessage(sent);
  sent.n = 2;
  port2.postMessage("second");
  log("sync", seen.length);
  await tick();
  log("delivered", seen);
  port1.close();
}
{
  // start() delivers what was queued (node also starts a port at addEventListener,
  // which HTML does not: tests/runtime/test_web_messaging.py checks hugind's).
  const { port1, port2 } = new MessageChannel();
  const seen = [];
  port2.postMessage("queued");
  await tick();
  port1.addEventListener("message", (e) => seen.push(e.data));
  port1.start();
  await tick();
  log("after start", seen);
  port1.close();
}
{
  // A port sent through another port arrives in event.ports, still paired.
  const a = new MessageChannel();
  const b = new MessageChannel();
  let received;
  a.port1.onmessage = (e) => (received = e.ports[0]);
  a.port2.postMessage("take this", [b.port2]);
  await tick();
  log("got a port", received instanceof MessagePort, received !== b.port2);
  const echoed = new Promise((resolve) => (b.port1.onmessage = (e) => resolve(e.data)));
  received.postMessage("through the moved port");
  log("echo", await echoed);
  a.port1.close();
  b.port1.close();
  received.close();
}
{
  // close() on either end stops delivery; a port cannot carry itself.
  const { port1, port2 } = new MessageChannel();
  const seen = [];
  port1.onmessage = (e) => seen.push(e.data);
  port1.close();
  port2.postMessage("after close");
  await tick();
  log("closed", seen);
  try {
    port2.postMessage(1, [port2]);
    log("self transfer", "no error");
  } catch (e) {
    log("self transfer", e.name);
  }
  try {
    new MessagePort();
  } catch (e) {
    log("constructor", e.name);
  }
  const ev = new MessageEvent("message", { data: 5, origin: "o", lastEventId: "7" });
  log("event", ev.data, ev.origin, ev.lastEventId, ev.source, ev.ports.length);
}
console.log("done");
