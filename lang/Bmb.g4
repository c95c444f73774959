// Bmb.g4 - the concrete syntax of .bmb files.
//
// Only lang/Parser*.cpp sees the code generated from this file; it turns the
// parse tree into the plain AST of lang/AST.h.
//
// Design notes (why the rules look the way they do):
//  * Newlines are whitespace. Items, statements and settings need no
//    separator because an expression can never be continued by a name: every
//    binary operator is a symbol or `and`/`or`/`if`, and calls need `(`.
//  * Expressions are written as explicit precedence levels with loops rather
//    than one left-recursive rule, so that `a + a + ... + a` is a loop, not a
//    recursion, in the generated parser. The only recursive forms are
//    brackets, unary `-` and `not`; Parser.cpp bounds those before parsing.
//  * `x if c else y if d else z` is a loop as well (folded to the right by the
//    AST builder); `x = f(a)` followed by a statement `if c { ... }` is told
//    apart from the conditional `f(a) if c` by what follows the condition.
//  * Recipe directives have no terminator: a directive starts at a name that
//    begins a line (or follows '{' or ';'); a bare name elsewhere is an
//    argument of the current directive (the `newDirective` predicate).
//  * Malformed tokens (unterminated strings, numbers with letters glued on)
//    are accepted by the grammar where a string or number may stand, so that
//    the lexical error is reported once, without a cascade of syntax errors.
grammar Bmb;

@parser::members {
  /// True when the next token may start a recipe directive: it follows '{'
  /// or ';', or starts a new line. A bare name continues the current
  /// directive as an argument exactly when this is false, so the two
  /// predicates below are complements and prediction never has to look past
  /// the name (it would otherwise scan to the end of the recipe to find that
  /// both readings parse).
  bool newDirective() {
    antlr4::Token *prev = _input->LT(-1);
    antlr4::Token *next = _input->LT(1);
    if (!prev || !next)
      return true;
    size_t t = prev->getType();
    return t == LBRACE || t == SEMI || prev->getLine() != next->getLine();
  }
}

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
paramDecl : FROZEN? PARAM name=IDENT ':' tensorType ('=' init=orExpr)? (IF cond=orExpr)? ;

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

label : key '=' (str | '[' (str (',' str)* ','?)? ']') ;

recipeDecl : RECIPE name=IDENT '{' (directive | ';')* '}' ;

directive
  : {newDirective()}? verb=IDENT (FROM modelRef ('@' path=str)?)? directiveArg*
    (ON on=expr)? directiveSetting* settingsBlock?
  ;

directiveArg : dirAtom (sep=(':' | '->') dirValue)? ;

dirAtom : {!newDirective()}? IDENT | dirLiteral ;

dirValue : IDENT | dirLiteral ;

dirLiteral
  : number
  | '-' number
  | str
  | TRUE
  | FALSE
  | list
  ;

directiveSetting : key '=' settingValue ;

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

block : '{' (stmt | ';')* '}' ;

stmt : assignStmt | returnStmt | ifStmt ;

assignStmt : IDENT (',' IDENT)* '=' expr ;

returnStmt : RETURN expr (',' expr)* ;

// `else if` is a loop, not a recursion; the AST builder nests it.
ifStmt : IF orExpr block (ELSE IF orExpr block)* (ELSE block)? ;

//===----------------------------------------------------------------------===//
// Expressions, lowest precedence first
//===----------------------------------------------------------------------===//

expr : orExpr (IF orExpr ELSE orExpr)* (IF orExpr)? ;

orExpr : andExpr (OR andExpr)* ;

andExpr : notExpr (AND notExpr)* ;

notExpr : NOT notExpr | cmpExpr ;

cmpExpr : addExpr (op=('==' | '!=' | '<' | '<=' | '>' | '>=') addExpr)* ;

addExpr : mulExpr (op=('+' | '-') mulExpr)* ;

mulExpr : unaryExpr (op=('*' | '/' | '%') unaryExpr)* ;

unaryExpr
  : '-' unaryExpr
  | REPEAT '(' expr ')' layer=IDENT callArgs?
  | postfixExpr
  ;

postfixExpr : primary (callArgs | '.' key)* ;

primary
  : number
  | str
  | TRUE
  | FALSE
  | IDENT
  | '...'
  | parenExpr
  | list
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
  | TEMPLATE | VERBALIZER | RECIPE | PARAM | FROZEN | FORWARD | FOR | FROM
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
