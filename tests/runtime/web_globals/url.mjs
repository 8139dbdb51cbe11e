const bases = [undefined, "http://example.org/foo/bar?q#f", "file:///C:/dir/file", "about:blank", "sc://host/a/b"];
const inputs = [
  "http://example.com", "HTTP://EXAMPLE.COM:80/", "https://example.com:443/a", "https://example.com:8443/a/../b/./c",
  "http://user:pa ss@host.com:8080/p?q=1#h", "http://@host/", "http://:@host/", "http://a:b@c:d/", "http://a@b@c/",
  "http://[::1]/", "http://[0:0:0:0:0:0:0:1]:81/", "http://[2001:db8::ff00:42:8329]/", "http://[::ffff:192.168.0.1]/",
  "http://[1:0:0:2::3:0]/", "http://[1:2::]/", "http://[::]/", "http://[1::2::3]/", "http://[g::]/",
  "http://192.168.0.257/", "http://0x7f.1/", "http://2130706433/", "http://0177.0.0.1/", "http://1.2.3.4.5/", "http://1.2.3.09/",
  "http://foo.0x/", "http://foo.09/", "http://127.0.0.1./", "http://0x100000000/", "http://4294967295/", "http://999999999999/",
  "http://ExAmPlE.CoM/%7Efoo/%2e%2E/bar", "http://example.com/a/%2e./b", "http://example.com/a/.%2E/b", "http://example.com/..",
  "http://example.com/a/b/../../..", "http://example.com/a/./b/.", "http://example.com/a b/c\"d<e>f`g{h}i|j",
  "http://example.com/?a b'c\"d#e f`g", "ws://example.com/?a'b", "foo://example.com/?a'b", "http://example.com/#a b\"c<d>e`f",
  "http://ex ample.com/", "http://exa%41mple.com/", "http://exa%zzmple.com/", "http://ex%00ample.com/", "http://example.com:65535/",
  "http://example.com:65536/", "http://example.com:0/", "http://example.com:00080/", "http://example.com:8a/",
  "https://münchen.de/", "https://BÜCHER.example/", "http://xn--nxasmq6b.com/", "https://例え.テスト/パス?クエリ#フラグメント",
  "http://example.com\\foo\\bar", "http:\\\\example.com\\x", "http:/example.com/", "http:example.com/", "https:example.com",
  "  http://example.com/  ", "\thttp://exa\nmple.com/\r", "ftp://user@ftp.example.com:21/file.txt", "ws://x:80/", "wss://x:443/",
  "mailto:someone@example.com", "javascript:alert(1)", "data:text/plain,hello world", "urn:isbn:0451450523", "about:blank",
  "blob:https://example.com/uuid", "blob:foo", "sc://ñ/", "sc://%/", "sc://a b/", "sc://[::1]/", "sc://host:99/x", "sc:/a/../b",
  "sc:a/../b", "sc://", "sc://@/", "sc:///path", "non-spec:/.//p", "non-spec:/..//p", "web+demo:/.//not-a-host/",
  "file:///etc/passwd", "file://localhost/etc/hosts", "file://host/share/x", "file:///C:/Windows/../x", "file:///C|/x",
  "file:c:\\foo\\bar", "file:/C:/x", "file://C:/x", "file:///./y", "file:..", "file://[1::8]/", "FILE://LOCALHOST/",
  "", " ", "/", "//", "///", "?", "#", "?x=1", "#frag", "a", "./a", "../a", "../../../../a", "/a/b", "//other.host/p",
  "///triple", "\\\\back", "..", ".", "a/b/../c", "x:", "1http://a/", "h!ttp://a/", "http://", "http://?", "http://#",
  "https://", "http:///host/", "https:////host//p", "http://a/b//c", "http://a/%zz%2", "http://a/ü?ü#ü", "http://a/\u{1F600}",
  "HTTP://a.B.c/D?E#F", "http://a:/", "http://a:80", "https://a:80", "http://a.b.c.d.e.f.g/", "http://256.256.256.256/",
  "http://1.2.3/", "http://0/", "http://0x/", "http://09/", "http://.0x1/", "http://[::1]:/", "http://[::1]x/",
  "http://[0::0::0]/", "http://[::127.0.0.1]/", "http://[::127.0.0.256]/", "http://[::1.2.3]/", "http://[1:2:3:4:5:6:7:8:9]/",
  "http://[1:2:3:4:5:6:7::]/", "http://[0:0:1:0:0:0:0:0]/", "http://[1:0:0:1:0:0:0:1]/", "http://[1:0:1:0:1:0:1:0]/",
  "http://a/?q=%zz&x=%41", "http://a/?q=\u00e9", "http://a/#\u00e9", "http://a/p?#", "http://a/p?", "http://a/p#",
  "http://a/#?x", "http://a/?x#y#z", "sc:\u00e9", "sc:/\u00e9", "http://a/b;c=d", "http://a/b%2Fc", "http://a/~user",
  "http://a/b?c=d&e=f&c=g", "https://user:@a/", "https://:pass@a/", "https://us%40er:p%3As@a/", "http://a/x/..%2f", "http://a/%2e",
  "http://faß.de/", "http://ΣΟΦΟΣ.gr/", "http://a.com./", "http://a..com/", "http://-a.com/", "http://a_b.com/",
  "http://xn--mnchen-3ya.de/", "http://xn--abc.de/", "http://xn--a-ecp.ru/", "http://XN--LS8H.la/", "http://xn--/", "http://xn--abc-/",
  "http://\u2603.net/", "http://\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com/", "http://EXAMPLE\u3002com/", "http://x\u00ad.com/",
  "http://\u216b.com/", "http://\ufb01.com/", "http://\u2460.com/",
  "http://a<b.com/", "http://a^b.com/", "http://a|b.com/", "http://a%b.com/", "http://a\u0000b/", "http://a*b.com/",
];
function show(u) {
  return [u.href, u.origin, u.protocol, u.username, u.password, u.host, u.hostname, u.port, u.pathname, u.search, u.hash].join(" | ");
}
for (const base of bases) {
  for (const input of inputs) {
    let line;
    try { line = show(new URL(input, base)); } catch (e) { line = "fail " + e.name; }
    console.log(JSON.stringify(input), JSON.stringify(base ?? null), "=>", line);
  }
}
console.log(URL.canParse("x"), URL.canParse("x", "http://a/"));
// setters
const u = new URL("http://u:p@example.com:8080/a/b?x=1#h");
const set = (k, v) => { u[k] = v; console.log(k, JSON.stringify(v), "->", u.href); };
set("protocol", "https"); set("protocol", "ftp:"); set("protocol", "mailto"); set("protocol", "http");
set("username", "us er"); set("password", "p@ss"); set("host", "other.org:9090"); set("hostname", "third.net");
set("hostname", "x:1"); set("port", "81"); set("port", "80"); set("port", "99999"); set("port", "12ab"); set("port", "");
set("pathname", "/new path/../x"); set("pathname", "rel"); set("search", "?a=b c"); set("search", ""); set("search", "q");
set("hash", "#frag ment"); set("hash", ""); set("hash", "x"); set("host", ""); set("hostname", "[::1]"); set("href", "https://z/");
try { u.href = "nope"; } catch (e) { console.log("href fail", e.name); }
// searchParams
const p = new URLSearchParams("?a=1&b=2&a=3&c=%20x+y&d&=e&f=%zz");
console.log([...p].map((x) => x.join("=")).join(";"), p.size, p.get("a"), p.getAll("a").join(), p.has("d"), p.get("zz"));
p.append("ü", "é&=+ ~*'()!"); p.set("a", "new"); p.delete("b"); console.log(p.toString());
p.sort(); console.log(p.toString(), p.has("a", "new"), p.has("a", "old"));
p.delete("a", "nope"); console.log(p.toString());
console.log(new URLSearchParams({ x: "1", y: "a b" }).toString(), new URLSearchParams([["k", "v"], ["k", "w"]]).toString());
const u2 = new URL("https://example.com/s?x=1");
u2.searchParams.append("y", "a b"); console.log(u2.href, u2.search);
u2.searchParams.delete("x"); u2.searchParams.delete("y"); console.log(u2.href);
u2.search = "?q=z"; console.log(u2.searchParams.get("q"));
console.log(JSON.stringify({ u: new URL("http://a/b") }), String(new URL("http://a/b")));
const keys = []; new URLSearchParams("b=1&a=2").forEach((v, k) => keys.push(k + v)); console.log(keys.join());
console.log("done");
