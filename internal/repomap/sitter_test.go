package repomap

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTreeSitterLanguages(t *testing.T) {
	cases := []struct {
		lang, src string
		want      []string
		refs      []string
	}{
		{"python", `
import os

class Session(Base):
    def get(self, url, **kwargs):
        return self.request("GET", url)

    @property
    def closed(self) -> bool:
        return False

def helper(x):
    def inner():
        pass
    return Session()
`, []string{
			"class Session | class Session(Base)",
			"function helper | def helper(x)",
			"function inner | def inner()",
			"method Session.closed | def closed(self) -> bool",
			"method Session.get | def get(self, url, **kwargs)",
		}, []string{"Session", "request", "Base"}},
		{"javascript", `
export function serve(port) { return new Server(port) }
class Server extends Base {
  constructor(port) { this.port = port }
  listen() { return helper(this.port) }
}
const helper = (p) => p + 1
`, []string{
			"class Server | class Server extends Base",
			"function helper | helper = (p) =>",
			"function serve | function serve(port)",
			"method Server.constructor | constructor(port)",
			"method Server.listen | listen()",
		}, []string{"Server", "helper", "port"}},
		{"typescript", `
export interface Store { get(key: string): Promise<Item> }
export type Item = { id: number }
enum Color { Red }
export abstract class Base implements Store {
  abstract get(key: string): Promise<Item>;
  run(n: number): void {}
}
export function make(): Store { return null as any }
`, []string{
			"class Base | abstract class Base implements Store",
			"enum Color | enum Color",
			"function make | function make(): Store",
			"interface Store | interface Store",
			"method Base.get | abstract get(key: string): Promise<Item>",
			"method Base.run | run(n: number): void",
			"method Store.get | get(key: string): Promise<Item>",
			"type Item | type Item = { id: number }",
		}, []string{"Store", "Item", "Promise"}},
		{"tsx", `
export function App(props: Props) { return <div>{props.title}</div> }
interface Props { title: string }
`, []string{
			"function App | function App(props: Props)",
			"interface Props | interface Props",
		}, []string{"Props", "title"}},
		{"rust", `
pub struct Config { name: String }
pub trait Store { fn get(&self, k: &str) -> Option<String>; }
impl Store for Config {
    fn get(&self, k: &str) -> Option<String> { None }
}
impl Config {
    pub fn new(name: String) -> Self { Config { name } }
}
pub enum Mode { A, B }
const LIMIT: usize = 10;
macro_rules! m { () => {} }
fn main() { let c = Config::new(String::new()); }
`, []string{
			"const LIMIT | const LIMIT: usize = 10;",
			"enum Mode | pub enum Mode",
			"function main | fn main()",
			"macro m | macro_rules! m { () => {} }",
			"method Config.get | fn get(&self, k: &str) -> Option<String>",
			"method Config.new | pub fn new(name: String) -> Self",
			"method Store.get | fn get(&self, k: &str) -> Option<String>;",
			"struct Config | pub struct Config",
			"trait Store | pub trait Store",
		}, []string{"Config", "Store", "new", "name"}},
		{"java", `
package x;
public class Server implements Handler {
    public Server(int port) {}
    public void serve(Request r) throws IOException { handle(r); }
}
interface Handler { void handle(Request r); }
enum Level { LOW }
record Point(int x, int y) {}
`, []string{
			"class Server | public class Server implements Handler",
			"constructor Server.Server | public Server(int port)",
			"enum Level | enum Level",
			"interface Handler | interface Handler",
			"method Handler.handle | void handle(Request r);",
			"method Server.serve | public void serve(Request r) throws IOException",
			"record Point | record Point(int x, int y)",
		}, []string{"Handler", "Request", "handle"}},
	}
	for _, c := range cases {
		t.Run(c.lang, func(t *testing.T) {
			if diff := cmp.Diff(c.want, defsOf(t, c.lang, c.src)); diff != "" {
				t.Errorf("definitions (-want +got):\n%s", diff)
			}
			l := newLanguages(nil)
			defer l.close()
			_, refs, err := l.parse(c.lang, []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range c.refs {
				if refs[r] == 0 {
					t.Errorf("no reference to %s counted; refs = %v", r, refs)
				}
			}
		})
	}
}
