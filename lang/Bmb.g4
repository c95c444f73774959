// Bmb.g4 - the concrete syntax of .bmb files.
//
// Only lang/Parser*.cpp sees the code generated from this file; it turns the
// parse tree into the plain AST of lang/AST.h.
//
// Design notes (why the rules look the way they do):
//  * Newlines are whitespace. Items, statements and settings need no
//    separator because an expression can never be continued by a name: every
//    binary operator is a symbol or `and`/`or`/`if`, and calls need `(`.
//  * Operators are one left-recursive rule, which ANTLR parses by precedence
//    climbing: `a + a + ... + a` is a loop, not a recursion, in the generated
//    parser. The only recursive forms are brackets and the prefix operators
//    `-` and `not`; Parser.cpp bounds those before parsing.
//  * `x if c else y if d else z` is a loop as well (folded to the right by the
//    AST builder); `x = f(a)` followed by a statement `if c { ... }` is told
//    apart from the conditional `f(a) if c` by what follows the condition.
//  * Recipe directives have no terminator: a directive starts at a name that
//    begins a line (or follows '{' or ';') and is not followed by '='; a bare
//    name elsewhere is an argument of the current directive. Parser.cpp marks
//    such names as VERB tokens before parsing.
//  * Malformed tokens (unterminated strings, numbers with letters glued on)
//    are accepted by the grammar where a string or number may stand, so that
//    the lexical error is reported once, without a cascade of syntax errors.
grammar Bmb;

// A name that starts a recipe directive. The lexer never makes one:
// Parser.cpp retypes IDENT tokens before parsing (markDirectiveVerbs), so
// every decision about where a directive ends is made on one token.
tokens { VERB }

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

file : (decl | ';')* EOF ;

decl
  : importDecl
  | layerDecl
  | modelDecl
  | jobDecl
  | templateDecl
  | verbalizerDecl
  | recipeDecl
  | checkpointDecl
  ;

importDecl : IMPORT str ;

layerDecl : LAYER name=IDENT hyperParams? layerBody ;

// `model M(...) { ... }` or the alias `model Tiny = M(dim = 64)`; one rule so
// that the choice is made on the token after the name.
modelDecl : MODEL name=IDENT ('=' target=IDENT callArgs? | hyperParams? layerBody) ;

hyperParams : '(' (hyperParam (',' hyperParam)* ','?)? ')' ;

hyperParam : name=IDENT (':' type=IDENT)? ('=' expr)? ;

layerBody : '{' (layerItem | ';')* '}' ;

layerItem : paramDecl | forwardDecl | binding ;

// The init and the condition stop below the conditional expression so that
// `= zeros if bias` reads as init `zeros`, condition `bias`.
paramDecl : FROZEN? PARAM name=IDENT ':' tensorType ('=' init=opExpr)? (IF cond=opExpr)? ;

binding : name=IDENT '=' expr ;

forwardDecl
  : FORWARD '(' (forwardInput (',' forwardInput)* ','?)? ')' ('->' resultTypes)?
    ('=' expr | block)
  ;

forwardInput : name=IDENT (':' tensorType)? ;

resultTypes
  : tensorType
  | '(' tensorType (',' tensorType)* ','? ')'
  ;

tensorType : dtype=IDENT? '[' (expr (',' expr)* ','?)? ']' ;

jobDecl
  : kind=(TRAIN | TUNE | COMPRESS | INFER) name=IDENT FOR modelRef
    (FROM from=str)? (WITH recipe=IDENT)? settingsBlock
  ;

modelRef : name=IDENT callArgs? ;

settingsBlock : '{' (setting (',' | ';')?)* '}' ;

setting : key '=' settingValue ;

// `prompt = sentiment -> polarity`, `ratio = 2:4`.
settingValue : expr (sep=('->' | ':') expr)? ;

templateDecl : TEMPLATE name=IDENT '=' str ;

verbalizerDecl : VERBALIZER name=IDENT '{' (label (',' | ';')?)* '}' ;

// `good = ["great", "fine"]` is a label; `reduce = first`, `soft = true`,
// `calibrate = true` (a bare word) are the verbalizer's options.
label : key '=' (str | '[' (str (',' str)* ','?)? ']' | option=(IDENT | TRUE | FALSE)) ;

recipeDecl : RECIPE name=IDENT '{' (directive | ';')* '}' ;

directive
  : verb=VERB (FROM modelRef ('@' path=str)?)? directiveArg* (ON on=expr)?
    directiveSetting* settingsBlock?
  ;

directiveArg : dirAtom (sep=(':' | '->') dirAtom)? ;

dirAtom
  : IDENT
  | number
  | '-' number
  | str
  | TRUE
  | FALSE
  | list
  ;

directiveSetting : key '=' settingValue ;

// `checkpoint hf for GPT2 { "transformer.wte.weight" = wte.w ... }`: how the
// model's parameters are named in a foreign checkpoint. Rules need no
// separator: a rule starts with a string, which cannot continue an expression.
checkpointDecl
  : CHECKPOINT name=IDENT FOR model=IDENT '{' (nameRule (',' | ';')?)* '}'
  ;

// The value stops below the conditional expression, as a param's init does,
// so that `= pool.w if pooler` reads as value `pool.w`, condition `pooler`.
nameRule : external=str '=' value=opExpr (IF cond=opExpr)? ;

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

block : '{' (stmt | ';')* '}' ;

stmt : assignStmt | returnStmt | ifStmt ;

assignStmt : IDENT (',' IDENT)* '=' expr ;

returnStmt : RETURN expr (',' expr)* ;

// `else if` is a loop, not a recursion; the AST builder nests it.
ifStmt : IF opExpr block (ELSE IF opExpr block)* (ELSE block)? ;

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

expr : opExpr (IF opExpr ELSE opExpr)* (IF opExpr)? ;

// Alternatives bind tighter the earlier they are listed. ANTLR turns this
// left-recursive rule into precedence climbing: a chain of same-level
// operators is a loop, and a leaf is a single context (which keeps the
// parse tree of large inputs small).
opExpr
  : opExpr callArgs                                               # callExpr
  | opExpr '.' key                                                # memberExpr
  | '-' opExpr                                                    # negExpr
  | opExpr op=('*' | '/' | '%') opExpr                            # binaryExpr
  | opExpr op=('+' | '-') opExpr                                  # binaryExpr
  | opExpr op=('==' | '!=' | '<' | '<=' | '>' | '>=') opExpr      # binaryExpr
  | NOT opExpr                                                    # notExpr
  | opExpr op=AND opExpr                                          # binaryExpr
  | opExpr op=OR opExpr                                           # binaryExpr
  | REPEAT '(' expr ')' layer=IDENT callArgs?                     # repeatExpr
  | tok=(INT | FLOAT | SIZE | BAD_NUMBER)                         # numberExpr
  | tok=(STRING | BAD_STRING)                                     # stringExpr
  | tok=(TRUE | FALSE)                                            # boolExpr
  | IDENT                                                         # nameExpr
  | '...'                                                         # ellipsisExpr
  | parenExpr                                                     # parensExpr
  | list                                                          # listExpr
  ;

number : INT | FLOAT | SIZE | BAD_NUMBER ;

str : STRING | BAD_STRING ;

parenExpr : '(' (expr (',' expr)* ','?)? ')' ;

list : '[' (listElem (',' listElem)* ','?)? ']' ;

listElem : expr (sep=(':' | '->') expr)? ;

callArgs : '(' (callArg (',' callArg)* ','?)? ')' ;

callArg : key '=' expr | expr ;

// Where a name is only a key (keyword arguments, settings, labels, members)
// keywords that read as ordinary words are allowed: lora(on = [...]).
key
  : IDENT | IMPORT | LAYER | MODEL | TRAIN | TUNE | COMPRESS | INFER
  | TEMPLATE | VERBALIZER | RECIPE | CHECKPOINT | PARAM | FROZEN | FORWARD | FOR | FROM
  | WITH | ON | REPEAT
  ;

//===----------------------------------------------------------------------===//
// Tokens
//===----------------------------------------------------------------------===//

IMPORT : 'import' ;
LAYER : 'layer' ;
MODEL : 'model' ;
TRAIN : 'train' ;
TUNE : 'tune' ;
COMPRESS : 'compress' ;
INFER : 'infer' ;
TEMPLATE : 'template' ;
VERBALIZER : 'verbalizer' ;
RECIPE : 'recipe' ;
CHECKPOINT : 'checkpoint' ;
PARAM : 'param' ;
FROZEN : 'frozen' ;
FORWARD : 'forward' ;
RETURN : 'return' ;
IF : 'if' ;
ELSE : 'else' ;
FOR : 'for' ;
FROM : 'from' ;
WITH : 'with' ;
ON : 'on' ;
REPEAT : 'repeat' ;
TRUE : 'true' ;
FALSE : 'false' ;
AND : 'and' ;
OR : 'or' ;
NOT : 'not' ;

LPAREN : '(' ;
RPAREN : ')' ;
LBRACK : '[' ;
RBRACK : ']' ;
LBRACE : '{' ;
RBRACE : '}' ;
COMMA : ',' ;
COLON : ':' ;
SEMI : ';' ;
ASSIGN : '=' ;
ARROW : '->' ;
AT : '@' ;
ELLIPSIS : '...' ;
DOT : '.' ;
EQ : '==' ;
NE : '!=' ;
LE : '<=' ;
GE : '>=' ;
LT : '<' ;
GT : '>' ;
PLUS : '+' ;
MINUS : '-' ;
STAR : '*' ;
SLASH : '/' ;
PERCENT : '%' ;

// A byte count: 6GiB, 512MB (decimal and binary units).
SIZE : DIGITS ('.' DIGITS)? ('KB' | 'MB' | 'GB' | 'TB' | 'KiB' | 'MiB' | 'GiB' | 'TiB') ;
FLOAT : DIGITS '.' DIGITS EXPONENT? | DIGITS EXPONENT ;
INT : DIGITS ;
// A number with letters glued on (12abc, 0x1f, 1.0f): reported, never split.
BAD_NUMBER : DIGITS ('.' DIGITS)? EXPONENT? [a-zA-Z_] [a-zA-Z_0-9]* ;

IDENT : [a-zA-Z_] [a-zA-Z_0-9]* ;

// Escapes are decoded (and checked) by the AST builder.
STRING : '"' (ESCAPE | ~["\\\r\n])* '"' ;
// A string that reaches the end of its line or of the file.
BAD_STRING : '"' (ESCAPE | ~["\\\r\n])* '\\'? ;

LINE_COMMENT : '//' ~[\r\n]* -> skip ;
BLOCK_COMMENT : '/*' .*? '*/' -> skip ;
// The longest match without `*/`: only wins when the comment never ends.
UNTERMINATED_COMMENT : '/*' (~'*' | '*'+ ~[*/])* '*'* -> channel(HIDDEN) ;
WS : [ \t\r\n\f]+ -> skip ;
// Anything else is reported by Parser.cpp and then ignored by the parser.
UNKNOWN_CHAR : . -> channel(HIDDEN) ;

fragment DIGITS : [0-9]+ ;
fragment EXPONENT : [eE] [+-]? [0-9]+ ;
fragment ESCAPE : '\\' ~[\r\n] ;
