//! `#[params]`: a model parameter declared in one statement, the way ns-3
//! declares a model's attributes (name, doc, default and checker together).
//!
//! Placed above the `#[derive(Deserialize, JsonSchema)]` of a struct, or of
//! an enum whose variants carry named fields, it reads each field's
//!
//! ```text
//! /// What the parameter is, and where its default comes from.
//! #[param(default = 0.9, range = FRACTION)]
//! target_utilization: f64,
//! ```
//!
//! and writes what the three readers of a parameter need:
//! - `default = EXPR`: `#[serde(default = ...)]` with a function returning
//!   `EXPR` (`Type::default_field`, or `Type::default_variant_field` in
//!   an enum), so the core JSON may leave the key out, and schemars writes
//!   the value into the JSON Schema as the key's `default`, where the Python
//!   layer reads it;
//! - `range = EXPR` (an `Ints` or `Reals` of `crate::param`):
//!   `#[schemars(transform = crate::param::Limit(EXPR))]`, the range in the
//!   schema; `zero_or = EXPR` does the same for a value where 0 means "none";
//! - a method `check_ranges(&self, p: &str) -> Result<(), String>` that
//!   rejects a field outside its range with its JSON path (`p.key`, or
//!   `key` when `p` is empty), through
//!   the trait `crate::param::Bound`.
//!
//! The doc comment stays where it is: schemars makes it the key's
//! `description`. Checks that relate keys to one another (a threshold at
//! most the buffer, MRM at most NRM) stay hand-written beside the model.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use syn::{parse_macro_input, parse_quote, Data, DeriveInput, Expr, Fields, Ident};

/// One field's declaration, read from its `#[param(...)]`.
struct Declared {
    field: Ident,
    range: Option<(Expr, bool)>,
}

/// See the crate's documentation.
#[proc_macro_attribute]
pub fn params(args: TokenStream, item: TokenStream) -> TokenStream {
    if !args.is_empty() {
        return syn::Error::new(Span::call_site(), "#[params] takes no arguments")
            .to_compile_error()
            .into();
    }
    let mut input = parse_macro_input!(item as DeriveInput);
    match expand(&mut input) {
        Ok(extra) => quote!(#input #extra).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand(input: &mut DeriveInput) -> syn::Result<Tokens> {
    let name = input.ident.clone();
    let mut defaults = Vec::new();
    let body = match &mut input.data {
        Data::Struct(s) => {
            let declared = declare(&name, None, &mut s.fields, &mut defaults)?;
            let (bind, checks) = checks(&declared);
            quote! {
                let Self { #(#bind,)* .. } = self;
                #(#checks)*
            }
        }
        Data::Enum(e) => {
            let mut arms = Vec::new();
            for v in &mut e.variants {
                let declared = declare(&name, Some(&v.ident), &mut v.fields, &mut defaults)?;
                if declared.iter().any(|d| d.range.is_some()) {
                    let (bind, checks) = checks(&declared);
                    let variant = &v.ident;
                    arms.push(quote! {
                        Self::#variant { #(#bind,)* .. } => { #(#checks)* }
                    });
                }
            }
            quote! {
                match self {
                    #(#arms)*
                    #[allow(unreachable_patterns)]
                    _ => {}
                }
            }
        }
        Data::Union(_) => {
            return Err(syn::Error::new(Span::call_site(), "#[params] on a union"));
        }
    };
    Ok(quote! {
        impl #name {
            #(#defaults)*

            /// Rejects a parameter outside the range it is declared with,
            /// naming it by its JSON path under `p`.
            #[allow(unused_variables)]
            pub fn check_ranges(&self, p: &str) -> ::core::result::Result<(), ::std::string::String> {
                #body
                ::core::result::Result::Ok(())
            }
        }
    })
}

/// Reads and removes the `#[param(...)]` of each named field of `fields`,
/// adds the serde and schemars attributes it stands for, and pushes each
/// default's function onto `defaults`.
fn declare(
    name: &Ident,
    variant: Option<&Ident>,
    fields: &mut Fields,
    defaults: &mut Vec<Tokens>,
) -> syn::Result<Vec<Declared>> {
    let mut out = Vec::new();
    let Fields::Named(named) = fields else {
        return Ok(out);
    };
    for f in &mut named.named {
        let mut default = None;
        let mut range = None;
        let mut found = false;
        let mut kept = Vec::new();
        for attr in f.attrs.drain(..) {
            if !attr.path().is_ident("param") {
                kept.push(attr);
                continue;
            }
            found = true;
            attr.parse_nested_meta(|meta| {
                let value: Expr = meta.value()?.parse()?;
                if meta.path.is_ident("default") {
                    default = Some(value);
                } else if meta.path.is_ident("range") {
                    range = Some((value, false));
                } else if meta.path.is_ident("zero_or") {
                    range = Some((value, true));
                } else {
                    return Err(meta.error("expected `default`, `range` or `zero_or`"));
                }
                Ok(())
            })?;
        }
        f.attrs = kept;
        if !found {
            continue;
        }
        let field = f.ident.clone().expect("named field");
        if let Some(value) = &default {
            let prefix = variant
                .map(|v| format!("{}_", v.to_string().to_lowercase()))
                .unwrap_or_default();
            let func = format_ident!("default_{}{}", prefix, field);
            let ty = &f.ty;
            let doc = format!("The default of `{prefix}{field}`, as declared with it.");
            defaults.push(quote! {
                #[doc = #doc]
                pub fn #func() -> #ty { #value }
            });
            let path = format!("{name}::{func}");
            f.attrs.push(parse_quote!(#[serde(default = #path)]));
        }
        if let Some((value, zero_or)) = &range {
            let attr = if *zero_or {
                parse_quote!(#[schemars(transform = crate::param::ZeroOr(#value))])
            } else {
                parse_quote!(#[schemars(transform = crate::param::Limit(#value))])
            };
            f.attrs.push(attr);
        }
        out.push(Declared { field, range });
    }
    Ok(out)
}

/// The bindings of the ranged fields and their checks.
fn checks(declared: &[Declared]) -> (Vec<&Ident>, Vec<Tokens>) {
    let ranged: Vec<&Declared> = declared.iter().filter(|d| d.range.is_some()).collect();
    let bind = ranged.iter().map(|d| &d.field).collect();
    let checks = ranged
        .iter()
        .map(|d| {
            let field = &d.field;
            let key = field.to_string();
            let (value, zero_or) = d.range.as_ref().expect("ranged");
            let bound = if *zero_or {
                quote!(crate::param::ZeroOr(#value))
            } else {
                quote!(#value)
            };
            quote! {
                crate::param::Bound::check_value(&#bound, &crate::param::KeyPath(p, #key), #field)?;
            }
        })
        .collect();
    (bind, checks)
}
