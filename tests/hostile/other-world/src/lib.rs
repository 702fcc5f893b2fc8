//! A component built against another world (it exports `greet` and nothing
//! of the hook world): the host must refuse it with a clear error.

wit_bindgen::generate!({
    inline: "
        package test:other@1.0.0;
        world greeter {
            export greet: func(name: string) -> string;
        }
    ",
});

struct Greeter;

impl Guest for Greeter {
    fn greet(name: String) -> String {
        format!("hello {name}")
    }
}

export!(Greeter);
