"""The key vocabulary (:mod:`deskpilot.desktop.ports.keys`) as XKB keysyms, without Xlib.

Wayland compositors take keysyms as X defined them (XKB keeps the numbering): Mutter's
``NotifyKeyboardKeysym``, the portal's, and the names in a virtual keyboard's keymap. The table
below was generated once from python-xlib's keysym groups for every name of the vocabulary; a
unit test keeps the two equal. A single character is its own keysym (Latin-1 keysyms equal
their code points; any other character is ``0x01000000 + code point``).
"""

from __future__ import annotations

from deskpilot.errors import DesktopError

_TABLE = """
BackSpace=ff08 Tab=ff09 Linefeed=ff0a Clear=ff0b Return=ff0d Pause=ff13 Scroll_Lock=ff14
Sys_Req=ff15 Escape=ff1b Multi_key=ff20 Kanji=ff21 Muhenkan=ff22 Henkan=ff23 Henkan_Mode=ff23
Romaji=ff24 Hiragana=ff25 Katakana=ff26 Hiragana_Katakana=ff27 Zenkaku=ff28 Hankaku=ff29
Zenkaku_Hankaku=ff2a Touroku=ff2b Massyo=ff2c Kana_Lock=ff2d Kana_Shift=ff2e Eisu_Shift=ff2f
Eisu_toggle=ff30 SingleCandidate=ff3c MultipleCandidate=ff3d Zen_Koho=ff3d Mae_Koho=ff3e
PreviousCandidate=ff3e Home=ff50 Left=ff51 Up=ff52 Right=ff53 Down=ff54 Page_Up=ff55
Prior=ff55 Next=ff56 Page_Down=ff56 End=ff57 Begin=ff58 Select=ff60 Print=ff61 Execute=ff62
Insert=ff63 Undo=ff65 Redo=ff66 Menu=ff67 Find=ff68 Cancel=ff69 Help=ff6a Break=ff6b
Mode_switch=ff7e script_switch=ff7e Num_Lock=ff7f KP_Space=ff80 KP_Tab=ff89 KP_Enter=ff8d
KP_F1=ff91 KP_F2=ff92 KP_F3=ff93 KP_F4=ff94 KP_Home=ff95 KP_Left=ff96 KP_Up=ff97 KP_Right=ff98
KP_Down=ff99 KP_Page_Up=ff9a KP_Prior=ff9a KP_Next=ff9b KP_Page_Down=ff9b KP_End=ff9c
KP_Begin=ff9d KP_Insert=ff9e KP_Delete=ff9f KP_Multiply=ffaa KP_Add=ffab KP_Separator=ffac
KP_Subtract=ffad KP_Decimal=ffae KP_Divide=ffaf KP_0=ffb0 KP_1=ffb1 KP_2=ffb2 KP_3=ffb3
KP_4=ffb4 KP_5=ffb5 KP_6=ffb6 KP_7=ffb7 KP_8=ffb8 KP_9=ffb9 KP_Equal=ffbd F1=ffbe F2=ffbf
F3=ffc0 F4=ffc1 F5=ffc2 F6=ffc3 F7=ffc4 F8=ffc5 F9=ffc6 F10=ffc7 F11=ffc8 L1=ffc8 F12=ffc9
L2=ffc9 F13=ffca L3=ffca F14=ffcb L4=ffcb F15=ffcc L5=ffcc F16=ffcd L6=ffcd F17=ffce L7=ffce
F18=ffcf L8=ffcf F19=ffd0 L9=ffd0 F20=ffd1 L10=ffd1 F21=ffd2 R1=ffd2 F22=ffd3 R2=ffd3 F23=ffd4
R3=ffd4 F24=ffd5 R4=ffd5 F25=ffd6 R5=ffd6 F26=ffd7 R6=ffd7 F27=ffd8 R7=ffd8 F28=ffd9 R8=ffd9
F29=ffda R9=ffda F30=ffdb R10=ffdb F31=ffdc R11=ffdc F32=ffdd R12=ffdd F33=ffde R13=ffde
F34=ffdf R14=ffdf F35=ffe0 R15=ffe0 Shift_L=ffe1 Shift_R=ffe2 Control_L=ffe3 Control_R=ffe4
Caps_Lock=ffe5 Shift_Lock=ffe6 Meta_L=ffe7 Meta_R=ffe8 Alt_L=ffe9 Alt_R=ffea Super_L=ffeb
Super_R=ffec Hyper_L=ffed Hyper_R=ffee Delete=ffff
space=20 exclam=21 quotedbl=22 numbersign=23 dollar=24 percent=25 ampersand=26 apostrophe=27
quoteright=27 parenleft=28 parenright=29 asterisk=2a plus=2b comma=2c minus=2d period=2e
slash=2f 0=30 1=31 2=32 3=33 4=34 5=35 6=36 7=37 8=38 9=39 colon=3a semicolon=3b less=3c
equal=3d greater=3e question=3f at=40 A=41 B=42 C=43 D=44 E=45 F=46 G=47 H=48 I=49 J=4a K=4b
L=4c M=4d N=4e O=4f P=50 Q=51 R=52 S=53 T=54 U=55 V=56 W=57 X=58 Y=59 Z=5a bracketleft=5b
backslash=5c bracketright=5d asciicircum=5e underscore=5f grave=60 quoteleft=60 a=61 b=62 c=63
d=64 e=65 f=66 g=67 h=68 i=69 j=6a k=6b l=6c m=6d n=6e o=6f p=70 q=71 r=72 s=73 t=74 u=75 v=76
w=77 x=78 y=79 z=7a braceleft=7b bar=7c braceright=7d asciitilde=7e nobreakspace=a0
exclamdown=a1 cent=a2 sterling=a3 currency=a4 yen=a5 brokenbar=a6 section=a7 diaeresis=a8
copyright=a9 ordfeminine=aa guillemotleft=ab notsign=ac hyphen=ad registered=ae macron=af
degree=b0 plusminus=b1 twosuperior=b2 threesuperior=b3 acute=b4 mu=b5 paragraph=b6
periodcentered=b7 cedilla=b8 onesuperior=b9 masculine=ba guillemotright=bb onequarter=bc
onehalf=bd threequarters=be questiondown=bf Agrave=c0 Aacute=c1 Acircumflex=c2 Atilde=c3
Adiaeresis=c4 Aring=c5 AE=c6 Ccedilla=c7 Egrave=c8 Eacute=c9 Ecircumflex=ca Ediaeresis=cb
Igrave=cc Iacute=cd Icircumflex=ce Idiaeresis=cf ETH=d0 Eth=d0 Ntilde=d1 Ograve=d2 Oacute=d3
Ocircumflex=d4 Otilde=d5 Odiaeresis=d6 multiply=d7 Ooblique=d8 Ugrave=d9 Uacute=da
Ucircumflex=db Udiaeresis=dc Yacute=dd THORN=de Thorn=de ssharp=df agrave=e0 aacute=e1
acircumflex=e2 atilde=e3 adiaeresis=e4 aring=e5 ae=e6 ccedilla=e7 egrave=e8 eacute=e9
ecircumflex=ea ediaeresis=eb igrave=ec iacute=ed icircumflex=ee idiaeresis=ef eth=f0 ntilde=f1
ograve=f2 oacute=f3 ocircumflex=f4 otilde=f5 odiaeresis=f6 division=f7 oslash=f8 ugrave=f9
uacute=fa ucircumflex=fb udiaeresis=fc yacute=fd thorn=fe ydiaeresis=ff
"""

KEYSYMS: dict[str, int] = {
    name: int(value, 16) for name, value in (item.split("=") for item in _TABLE.split())
}


def char_keysym(char: str) -> int:
    """The keysym that types ``char`` (newline: Return, tab: Tab)."""
    if char == "\n":
        return 0xFF0D
    if char == "\t":
        return 0xFF09
    code = ord(char)
    if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF:
        return code
    return 0x01000000 + code


def keysym(name: str) -> int:
    """The keysym of a key name of the vocabulary, or of one character."""
    if name in KEYSYMS:
        return KEYSYMS[name]
    if len(name) == 1:
        return char_keysym(name)
    raise DesktopError(f"unknown key name {name!r}")
