# cmake -DINPUT=file.bc -DOUTPUT=file.inc -DNAME=kSymbol -P embed_bitcode.cmake
# Writes the bytes of INPUT as `static const unsigned char NAME[]` and
# `static const unsigned long NAMESize`, for an #include.
file(READ ${INPUT} hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
file(WRITE ${OUTPUT}
  "// Generated from ${INPUT}: do not edit.\n"
  "static const unsigned char ${NAME}[] = {\n${bytes}\n};\n"
  "static const unsigned long ${NAME}Size = ${size};\n")
